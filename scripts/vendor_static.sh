#!/bin/sh
# Vendors the browser modules the studio imports into static/vendor/, pinned, from the npm registry.
# Run from the repository root: scripts/vendor_static.sh  (needs npm and tar; writes only static/vendor/three-*).
# Why: the studio loads no CDN and has no build step at run time — these are plain ES modules behind an import map.
set -eu

THREE_VERSION=0.187.0
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
