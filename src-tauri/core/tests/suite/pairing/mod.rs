//! The pairing wire (core::pairing) end to end over loopback TCP: a host with an in-memory device
//! table and a counting handler, companions, and a recording proxy between them. What Hearth
//! itself answers a paired device is in `suite::devices`.

mod limits;
mod offers;
mod privacy;
mod revocation;
mod session;
mod support;
