#!/usr/bin/env bash
# make demo: the sample file edited by the two tools a user has, each saying how it made
# its change: a rename by rope's analysis (specedit rename, no model), then a docstring by
# the default model (specedit rewrite, speculative decoding); then the whole change.
set -euo pipefail
bin=${1:-.venv/bin}
sample=app/samples/inventory.py
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$sample" "$work/inventory.py"
echo "== specedit rename inventory.py Inventory Stock"
"$bin/specedit" rename "$work/inventory.py" Inventory Stock --write
echo
echo "== specedit rewrite inventory.py -i 'Add a docstring to total_value.'"
# a result the checks flag is shown with their verdict and not written: the demo goes on
"$bin/specedit" rewrite "$work/inventory.py" -i "Add a docstring to total_value." --write || true
echo
echo "== the sample, before and after both"
diff -u --label "a/$sample" --label "b/$sample" "$sample" "$work/inventory.py" || true
