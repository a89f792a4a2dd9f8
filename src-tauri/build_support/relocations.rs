//! Packed relative relocations (`DT_RELR`) for a desktop binary, shared by the build scripts
//! of Hearth's shell and of the Tauri floor (tests/floor), so both are linked the same way.
//!
//! Why: a position-independent binary carries one 24-byte `Elf64_Rela` per pointer stored in
//! its data, and the dynamic loader reads them all at every start, so they are resident (and
//! counted in PSS) until memory pressure reclaims those clean pages. Hearth's release binary had 2.5 MB of them (`.rela.dyn`); packed,
//! they take about 25 KB (`.relr.dyn`), beside 15 KB of relocations that cannot be packed.
//! Measured (README, footprint): the binary went from 29.89 to 27.44 MB and the app process's
//! PSS at 60 s idle from 92.3 to 89.5 MB.
//!
//! Only where the result runs: `DT_RELR` needs glibc 2.36's loader. The linker records that
//! need as the symbol version `GLIBC_ABI_DT_RELR`, so an older loader refuses to start the
//! binary rather than ignore the packed relocations and crash (scripts/bundle.sh makes the .deb
//! depend on the build machine's libc6 for it) and a linker that packs them —
//! rust-lld, Rust's default on x86_64 Linux, or GNU ld 2.38 or later. So it is asked for when
//! building on and for Linux with glibc 2.36 or later (the build machine is then the machine it
//! runs on, or one as new), never when cross-compiling (Android, iOS) or on other C libraries.
//!
//! The glibc version is read when the build script runs; a shared target directory moved to a
//! machine with another glibc keeps the earlier answer until the build script runs again.

/// Prints the link argument for the binaries of the crate whose build script calls this.
pub fn pack_relative_relocations() {
    let env = |name: &str| std::env::var(name).unwrap_or_default();
    let native = env("HOST") == env("TARGET");
    if !(native && env("CARGO_CFG_TARGET_OS") == "linux" && env("CARGO_CFG_TARGET_ENV") == "gnu") {
        return;
    }
    if build_machine_glibc().is_some_and(|version| version >= (2, 36)) {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// The build machine's glibc version (`getconf GNU_LIBC_VERSION` answers "glibc 2.36").
fn build_machine_glibc() -> Option<(u32, u32)> {
    let answer = std::process::Command::new("getconf").arg("GNU_LIBC_VERSION").output().ok()?;
    let text = String::from_utf8(answer.stdout).ok()?;
    let version = text.trim().strip_prefix("glibc ")?;
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}
