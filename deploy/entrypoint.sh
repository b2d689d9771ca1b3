#!/bin/sh
# Entry point of the taxoforge image: set the umask the services write files with
# (data/ assets and snapshots, compute logs), then run the service's command.
#   TAXOFORGE_UMASK=0022  files 0644, folders 0755 (the default: readable, writable by the owner)
#   TAXOFORGE_UMASK=0002  group-writable, for a data/ folder shared by a group
#   TAXOFORGE_UMASK=0077  private to the user
set -eu
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
