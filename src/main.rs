fn main() {
    bmhctl::allocator::prefer_huge_pages();
    std::process::exit(bmhctl::cmd::run(std::env::args_os()));
}
