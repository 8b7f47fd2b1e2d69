#!/bin/sh
# Vendors the browser modules the studio imports into static/vendor/, pinned, from the npm registry.
# Run from the repository root: scripts/vendor_static.sh  (needs npm and tar; writes only static/vendor/).
# Why: the studio loads no CDN and has no build step at run time — these are plain ES modules behind an import map.
# axe-core is not loaded by the studio: the browser tests inject it to scan the studio for accessibility violations.
set -eu

THREE_VERSION=0.187.0
AXE_VERSION=4.14.1
dest="static/vendor/three-$THREE_VERSION"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$work" && npm pack --silent "three@$THREE_VERSION" >/dev/null && tar xzf "three-$THREE_VERSION.tgz")

rm -rf "$dest"
# Only what the 3D viewer imports: the core, the GLTF loader with its two helpers, the orbit controls, the licence.
for file in \
    LICENSE \
    build/three.module.js \
    build/three.core.js \
    examples/jsm/loaders/GLTFLoader.js \
    examples/jsm/utils/BufferGeometryUtils.js \
    examples/jsm/utils/SkeletonUtils.js \
    examples/jsm/controls/OrbitControls.js; do
    mkdir -p "$dest/$(dirname "$file")"
    cp "$work/package/$file" "$dest/$file"
done
echo "three@$THREE_VERSION -> $dest ($(du -sh "$dest" | cut -f1))"

# axe-core: its single minified script and licence.
axe_dest="static/vendor/axe-core-$AXE_VERSION"
mkdir -p "$work/axe"
(cd "$work/axe" && npm pack --silent "axe-core@$AXE_VERSION" >/dev/null && tar xzf "axe-core-$AXE_VERSION.tgz")
rm -rf "$axe_dest"
mkdir -p "$axe_dest"
cp "$work/axe/package/axe.min.js" "$work/axe/package/LICENSE" "$axe_dest/"
echo "axe-core@$AXE_VERSION -> $axe_dest ($(du -sh "$axe_dest" | cut -f1))"
