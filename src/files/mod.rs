pub mod yaml_file;
