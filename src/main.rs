fn main() {
    std::process::exit(bmhctl::cmd::run(std::env::args_os()));
}
