#!/bin/sh
# Entry point of the taxoforge image: refuse to run as root, set the umask the services write
# files with (data/ assets and snapshots, compute logs), then run the service's command.
#
# Root is refused at start-up, not only when the image is built: `docker run --user 0`, a
# compose file with `user: root` or `user: "0:0"` would otherwise run the services — and every
# run a UI user launches — as root. Exit code 77 (EX_NOPERM).
#   TAXOFORGE_UMASK=0022  files 0644, folders 0755 (the default: readable, writable by the owner)
#   TAXOFORGE_UMASK=0002  group-writable, for a data/ folder shared by a group
#   TAXOFORGE_UMASK=0077  private to the user
#
# The commands this script runs itself are named by absolute path, never looked up in PATH:
# an `id` planted earlier in PATH would otherwise answer "1000" for root. (The service's own
# command, "$@", is the image's, found the usual way.)
set -eu
ID=/usr/bin/id
[ -x "$ID" ] || ID=/bin/id
if [ ! -x "$ID" ]; then
  echo "taxoforge: cannot tell which user this is: neither /usr/bin/id nor /bin/id exists" >&2
  exit 70
fi
if [ "$("$ID" -u)" = 0 ]; then
  echo "taxoforge: refusing to run as root (uid 0): run the container as the image's user (the default)," \
       "or as your own uid with TAXOFORGE_UID/TAXOFORGE_GID (docker-compose.yml) or docker run --user UID:GID" >&2
  exit 77
fi
mask="${TAXOFORGE_UMASK:-0022}"
case "$mask" in
  [0-7][0-7][0-7] | [0-7][0-7][0-7][0-7]) ;;
  *)
    echo "taxoforge: TAXOFORGE_UMASK must be an octal umask such as 0022 or 0027, got '$mask'" >&2
    exit 64
    ;;
esac
umask "$mask"
if [ "$#" -eq 0 ]; then
  echo "taxoforge: no command given" >&2
  exit 64
fi
exec "$@"
