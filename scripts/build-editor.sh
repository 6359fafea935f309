#!/usr/bin/env bash
# Rebuild the playground's vendored editor (CodeMirror 6) into one ES module with its licences.
# Only needed to upgrade the editor: the built file is committed, and nothing here runs at run
# or test time (the playground serves service/playground_static/ as it is, with no network).
set -euo pipefail
here="$(cd "$(dirname "$0")/editor" && pwd)"
out="$(cd "$here/../.." && pwd)/service/playground_static/vendor"
cd "$here"
npm ci --no-audit --no-fund --ignore-scripts=false
./node_modules/.bin/esbuild entry.js --bundle --format=esm --minify --legal-comments=none \
    --outfile="$out/codemirror.js"
{
    echo "The editor bundle codemirror.js is built from these packages (scripts/build-editor.sh),"
    echo "each under the MIT licence below (their own LICENSE files, concatenated)."
    echo
    for pkg in $(node -e 'for (const k of Object.keys(require("./package-lock.json").packages)) if (k && !k.includes("esbuild")) console.log(k)'); do
        version=$(node -p "require('./$pkg/package.json').version")
        echo "==== ${pkg#node_modules/} $version ===="
        cat "$pkg/LICENSE" 2>/dev/null || cat "$pkg/LICENSE.md" 2>/dev/null || echo "(no LICENSE file; package.json says $(node -p "require('./$pkg/package.json').license"))"
        echo
    done
} > "$out/LICENSE.codemirror.txt"
echo "built $out/codemirror.js"
