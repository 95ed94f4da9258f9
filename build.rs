fn main() {
    // Only the Node addon links against N-API; the core alone (fuzz/) needs nothing.
    if std::env::var_os("CARGO_FEATURE_NODE").is_some() {
        napi_build::setup();
    }
}
