fn main() {
    bmhctl::allocator::tune();
    std::process::exit(bmhctl::cmd::run(std::env::args_os()));
}
