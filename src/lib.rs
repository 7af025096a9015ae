pub mod chunk;
pub mod config;
pub mod scan;
