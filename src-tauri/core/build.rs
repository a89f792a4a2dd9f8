//! `sqlx::migrate!` embeds `migrations/` when `store::open` compiles, but cargo does not watch
//! that folder by itself: without this, a new migration file left every binary built before it
//! (the examples the crash tests spawn, too) on the old schema.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
