//! The model worker for the core's tests: the same `run_worker` that `hearth
//! --local-model-worker` runs (the tests cannot start the app's binary from the core).
fn main() {
    std::process::exit(hearth_core::local_model::run_worker());
}
