//! `agora`: run the server, or an administrative command.

fn main() -> std::process::ExitCode {
    agora::cli::run()
}
