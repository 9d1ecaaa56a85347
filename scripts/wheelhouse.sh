#!/usr/bin/env bash
# Build the wheelhouse for an OFFLINE x86-64 Linux machine with an NVIDIA GPU and
# CPython 3.12, whose image already holds the scientific stack (numpy, pandas, matplotlib,
# cupy-cuda13x, cuda-bindings, nvidia-cuda-nvrtc, nvidia-ml-py, pyyaml, jinja2, pygments,
# tqdm, pytest, requests, ...; the full list is IMAGE below). It keeps what that image
# lacks: the Jupyter Book 1.x stack (sphinx, myst-nb, myst-parser, sphinx-book-theme,
# jupyter-cache, nbclient, nbformat, ipykernel, jupyter_client, pyzmq, tornado, traitlets,
# ipython, ...), ipywidgets, jupytext, nvtx, nvidia-cuda-nvdisasm, the explorers' altair,
# vl-convert-python and anywidget, MathJax (django-static-mathjax), cffi, and every dependency
# of those not in the image, resolved by pip for cp312 manylinux x86_64; one version each.
#
# An image whose NVRTC is 13.0 also needs nvidia-cuda-nvrtc>=13.1 (requirements.txt says
# why; 58 MB, not bundled here): pip download --no-deps 'nvidia-cuda-nvrtc>=13.1,<14' and
# install that wheel with --no-deps next to the image's CuPy.
#
# Output: .whl/wheels.tar.xz, ONE file (git-ignored; over 60 MB, of which vl-convert-python,
# which makes the explorers' Vega bundle, is a 33 MB wheel). The wheels are re-zipped
# without compression and the set is compressed as a whole with xz, so the repository plus
# wheelhouse stays small enough to copy to a machine that has no network. The wheels' contents and
# their RECORD hashes are unchanged; pip installs stored (uncompressed) wheels as usual.
#
# On the offline machine, from the repository root (with .whl/ copied along):
#
#   mkdir -p /tmp/wheels && tar -xJf .whl/wheels.tar.xz -C /tmp/wheels
#   python3 -m pip install --no-index --find-links /tmp/wheels \
#       'jupyter-book>=1.0.4,<2' ipykernel ipywidgets jupytext nvtx nvidia-cuda-nvdisasm \
#       altair vl-convert-python anywidget django-static-mathjax cffi
#   make book PY=python3          # or: make test-gpu PY=python3, make record PY=python3
#
# or, the same two install steps:  make wheelhouse-install PY=python3
# (PY=... makes the Makefile use that interpreter as it is, with PYTHONPATH=lib, and
# create or install nothing else.)
#
# Run this script on any Linux machine with network and Python 3.12 (PY312=/path/to/it):
#   scripts/wheelhouse.sh            -> .whl/wheels.tar.xz
#   scripts/wheelhouse.sh --plain    -> .whl/*.whl (the wheels as downloaded, no archive)
set -euo pipefail
cd "$(dirname "$0")/.."

PLAIN=0
[[ ${1:-} == --plain ]] && PLAIN=1
DEST=.whl
PY312=${PY312:-python3.12}
WANT=(
  "jupyter-book>=1.0.4,<2"
  "ipykernel>=6"
  "ipywidgets>=8"
  "jupytext>=1.16"
  "nvtx>=0.2.10"
  "nvidia-cuda-nvdisasm>=13,<14"
  "altair>=5.4"
  "vl-convert-python>=1.6"
  "anywidget>=0.9"
  "django-static-mathjax>=3.2.2"
  "cffi>=1.17"
)
# Kept even where the image has the project, because the book's stack bounds its version
# from above (myst-parser 3 needs markdown-it-py 3.x) and the image may hold a newer one.
KEEP="markdown-it-py"
# The offline machine's image already has these projects (normalized names, PEP 503).
IMAGE="absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio
attrs botorch build certifi charset-normalizer chex click cloudpickle cmake colorama
contourpy coverage cuda-bindings cuda-core cuda-pathfinder cuda-toolkit cupy-cuda13x cycler
cython diffrax e3nn einops equinox etils execnet filelock flatbuffers flax fonttools
formulaic frozenlist fsspec gpytorch grpcio h11 h5py hf-xet httpcore httpx huggingface-hub
humanize hypothesis idna imageio iniconfig interface-meta jax jax-cuda13-pjrt
jax-cuda13-plugin jaxlib jaxtyping jinja2 joblib kiwisolver lazy-loader lightning
lightning-utilities linear-operator lineax llvmlite lxml markdown markdown-it-py markupsafe
matplotlib mdurl meson ml-dtypes mpi4py mpmath msgpack multidict multipledispatch
mypy-extensions nanobind narwhals networkx ninja numba numba-cuda numpy numpyro
nvidia-cublas nvidia-cuda-cupti nvidia-cuda-nvrtc nvidia-cuda-runtime nvidia-cudnn-cu13
nvidia-cufft nvidia-cufile nvidia-curand nvidia-cusolver nvidia-cusparse
nvidia-cusparselt-cu13 nvidia-ml-py nvidia-nccl-cu13 nvidia-nvjitlink nvidia-nvshmem-cu13
nvidia-nvtx onnx onnx-ir onnxruntime onnxscript opencv-python-headless optax opt-einsum
opt-einsum-fx optimistix orbax-checkpoint packaging pandas pathspec patsy peft pillow pip
pluggy portalocker prometheus-client propcache protobuf psutil pyarrow pybind11 py-cpuinfo
pygments pyparsing pyproject-hooks pyre-extensions pytest pytest-benchmark pytest-cov
pytest-mock pytest-timeout pytest-xdist python-dateutil pytorch-lightning pyyaml regex
requests rich sacrebleu safetensors scikit-build-core scikit-image scikit-learn scipy
seaborn sentencepiece sentence-transformers setuptools shellingham simplejson six
sortedcontainers statsmodels sympy tabulate tensorboard tensorboard-data-server
tensorstore threadpoolctl tifffile tiktoken timm tokenizers toolz torch torchaudio
torchdiffeq torch-geometric torchmetrics torchvision tqdm transformers treescope triton
typer typing-extensions typing-inspect urllib3 uvloop wadler-lindig werkzeug wheel wrapt
xarray xxhash yarl zipp"

command -v "$PY312" >/dev/null || { echo "needs $PY312 (set PY312=/path/to/python3.12)" >&2; exit 1; }
"$PY312" -c 'import sys; assert sys.version_info[:2] == (3, 12), sys.version' \
  || { echo "$PY312 is not a working Python 3.12; set PY312=/path/to/python3.12" >&2; exit 1; }

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# Resolve the whole closure for the target with pip's resolver, run by a 3.12 interpreter
# so environment markers are evaluated for 3.12 on Linux x86-64.
"$PY312" -m pip download --quiet --disable-pip-version-check \
  --only-binary=:all: --python-version 3.12 --implementation cp --abi cp312 --abi abi3 --abi none \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --platform manylinux_2_12_x86_64 --platform manylinux2010_x86_64 \
  --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64 --platform any \
  -d "$tmp" "${WANT[@]}"

norm() { echo "$1" | tr 'A-Z' 'a-z' | sed -E 's/[-_.]+/-/g'; }
declare -A in_image=()
for p in $IMAGE; do in_image[$p]=1; done

declare -A keep=()
for p in $KEEP; do keep[$p]=1; done

if compgen -G "$tmp/*.tar.gz" >/dev/null || compgen -G "$tmp/*.zip" >/dev/null; then
  echo "a source distribution was downloaded; the offline machine needs wheels only" >&2; exit 1
fi
stage=$tmp/stage; mkdir -p "$stage"
declare -A seen=()
kept=0; dropped=()
for f in "$tmp"/*.whl; do
  name=$(norm "$(basename "$f" | cut -d- -f1)")
  if [[ -n ${in_image[$name]:-} && -z ${keep[$name]:-} ]]; then dropped+=("$name"); continue; fi
  if [[ -n ${seen[$name]:-} ]]; then
    echo "two versions of $name: $(basename "$f") and ${seen[$name]}" >&2; exit 1
  fi
  seen[$name]=$(basename "$f")
  mv "$f" "$stage/"; kept=$((kept + 1))
done
raw=$(du -cb "$stage"/*.whl | tail -1 | cut -f1)

rm -rf "$DEST"; mkdir -p "$DEST"
if [[ $PLAIN == 1 ]]; then
  mv "$stage"/*.whl "$DEST/"
else
  # Re-zip each wheel uncompressed (same files, same RECORD), then xz the whole set.
  "$PY312" - "$stage" <<'PYEOF'
import pathlib, sys, zipfile
for whl in sorted(pathlib.Path(sys.argv[1]).glob("*.whl")):
    out = whl.with_suffix(".stored")
    with zipfile.ZipFile(whl) as zi, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zo:
        for info in zi.infolist():
            data = zi.read(info)
            info.compress_type = zipfile.ZIP_STORED
            zo.writestr(info, data)
    out.replace(whl)
PYEOF
  tar -C "$stage" -cf - $(cd "$stage" && ls *.whl) | xz -9 -T0 > "$DEST/wheels.tar.xz"
  (cd "$stage" && ls *.whl) > "$DEST/wheels.txt"
fi

echo "kept $kept wheels ($((raw / 1000000)) MB as downloaded); in the image, not kept: ${dropped[*]}"
echo "wheelhouse: $DEST is $(du -sb "$DEST" | cut -f1) bytes ($(du -sh --apparent-size "$DEST" | cut -f1))"
