#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image.
# Base image: Gradescope's "Ubuntu 22.04" (jammy). It needs the internet (Gradescope's image has it).
# Installs Python 3.11 (Ubuntu's own packages, else the deadsnakes PPA) in a venv at
# /opt/poslab-venv, torch from PyTorch's CPU wheel index (no multi-GB CUDA build), the other pinned
# requirements from PyPI, and bubblewrap. /usr/local/bin/python3 then runs the venv's Python.
set -euo pipefail
SOURCE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV=/opt/poslab-venv
export DEBIAN_FRONTEND=noninteractive

apt-get update
if ! apt-get install -y --no-install-recommends python3.11 python3.11-venv; then
    apt-get install -y --no-install-recommends software-properties-common
    add-apt-repository -y ppa:deadsnakes/ppa
    apt-get update
    apt-get install -y --no-install-recommends python3.11 python3.11-venv
fi
# Usually bwrap cannot start inside Gradescope's container; the grader then uses its fallback
# (run_autograder closes the fallback's file-system gap as root). Installing it costs little.
apt-get install -y --no-install-recommends bubblewrap \
    || echo "setup.sh: bubblewrap could not be installed; the grader will use its fallback isolation"

python3.11 -m venv "$VENV"
"$VENV/bin/python" -m pip install --no-cache-dir --upgrade pip
"$VENV/bin/python" -m pip install --no-cache-dir --index-url @CPU_WHEELS@ @TORCH_REQUIREMENT@
"$VENV/bin/python" -m pip install --no-cache-dir -r "$SOURCE/requirements.txt"
# The children run under uids of their own: they must be able to read the installation.
chmod -R a+rX "$VENV"

cat > /usr/local/bin/python3 <<WRAPPER
#!/bin/sh
exec $VENV/bin/python3 "\$@"
WRAPPER
chmod 755 /usr/local/bin/python3
python3 -c "import sys, torch; assert sys.version_info[:2] == (3, 11); print('python', sys.version.split()[0], 'torch', torch.__version__)"
