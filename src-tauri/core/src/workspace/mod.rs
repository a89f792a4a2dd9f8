//! The owner's workspace: mail, calendar, files. For now the local sample workspace,
//! seeded on first start; Google arrives behind the same seam later.

pub mod seed;
