fn main() {
    let paths: Vec<std::path::PathBuf> = std::env::args().skip(1).map(Into::into).collect();
    let rep = iocap_audit::audit(&iocap_audit::Root::system(), &paths, &Default::default());
    println!("{}", serde_json::to_string_pretty(&rep).unwrap());
}
