//! The file layer of the log (a real file, or one that fails or stops at a chosen write or sync, for crash tests).
