mod runs;
mod startup;
mod support;
