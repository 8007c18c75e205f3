fn main() -> std::process::ExitCode {
    cargo_wasmprof::main()
}
