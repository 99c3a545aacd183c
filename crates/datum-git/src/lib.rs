//! Reading a fleet at a git revision (to come).
