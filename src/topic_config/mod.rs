//! Topic configs the way Kafka has them: every name Kafka 4.x accepts (`catalog`), Kafka's
//! validation and messages (`validate`), and the alter operations (`alter`). Pure code: the
//! handlers describe and propose, the produce path reads what it honours
//! (`produce::settings`).

pub mod alter;
pub mod catalog;
pub mod describe;
pub mod validate;
