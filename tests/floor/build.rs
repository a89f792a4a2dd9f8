//! Builds the floor's Tauri context (tauri.conf.json beside this file), and links the floor
//! as Hearth is linked (`relocations.rs`), so the footprint bench compares like with like.

#[path = "../../src-tauri/build_support/relocations.rs"]
mod relocations;

fn main() {
    relocations::pack_relative_relocations();
    tauri_build::build();
}
