// `sqlx::migrate!` embeds migrations/ at compile time; without this, a changed migration
// alone would not rebuild the crate (the macro cannot tell cargo on stable Rust).
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
