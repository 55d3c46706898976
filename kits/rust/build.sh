#!/bin/sh
# cargo writes Cargo.lock beside Cargo.toml, and only build/ is writable: build a copy
# there. Crates come from Debian's packages (.cargo/config.toml), offline.
set -e
mkdir -p build/crate
cp -r Cargo.toml src .cargo build/crate/
cd build/crate
cargo build --release --offline --target-dir ../target
cp ../target/release/bot ../bot
