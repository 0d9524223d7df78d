//! What a command is to its sender and to the state: `NounRequest` (its noun, its own
//! outcome), `Apply` (how the state applies it), and `noun!`, which makes a noun's command and
//! outcome enums from one row per command, so that no command can be paired with another's
//! outcome. `state::Request` puts a noun's commands into the log's `Command`.

use super::super::parts::MetadataState;

/// A noun's enum of commands, with its enum of outcomes. Made by `noun!` only.
pub trait Noun {
    type Outcome;
}

/// A command as its noun sees it: what it answers. Implemented by `noun!` only.
pub trait NounRequest: Sized {
    type Noun: Noun;
    type Outcome;
    const NAME: &'static str;
    fn into_noun(self) -> Self::Noun;
    /// This command's own outcome among its noun's; `Err` gives back another.
    fn outcome(
        outcome: <Self::Noun as Noun>::Outcome,
    ) -> Result<Self::Outcome, <Self::Noun as Noun>::Outcome>;
}

/// How the state applies a command: in its noun's file, never panicking. Only
/// `MetadataState::apply` calls it, through the noun's dispatch.
pub(in crate::metadata::state) trait Apply: NounRequest {
    fn apply(self, state: &mut MetadataState) -> Self::Outcome;
}

/// One noun: its command enum, its outcome enum (one variant per command, with the same name),
/// the noun's dispatch and each command's `NounRequest`, all from one row per command. A
/// variant's position is its log encoding: once released, append, never insert.
macro_rules! noun {
    ($(#[$doc:meta])* $commands:ident => $outcomes:ident {
        $( $command:ident => $outcome:ty ),+ $(,)?
    }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        pub enum $commands {
            $( $command($command), )+
        }

        /// One variant per command, with the command's name and its own outcome.
        #[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        pub enum $outcomes {
            $( $command($outcome), )+
        }

        impl $crate::metadata::state::commands::request::Noun for $commands {
            type Outcome = $outcomes;
        }

        impl $commands {
            pub(in crate::metadata::state) fn apply(
                self,
                state: &mut $crate::metadata::state::MetadataState,
            ) -> $outcomes {
                use $crate::metadata::state::commands::request::Apply;
                match self {
                    $( $commands::$command(c) => $outcomes::$command(c.apply(state)), )+
                }
            }
        }

        $(
            impl $crate::metadata::state::commands::request::NounRequest for $command {
                type Noun = $commands;
                type Outcome = $outcome;
                const NAME: &'static str = stringify!($command);
                fn into_noun(self) -> $commands {
                    $commands::$command(self)
                }
                fn outcome(outcome: $outcomes) -> Result<$outcome, $outcomes> {
                    match outcome {
                        $outcomes::$command(o) => Ok(o),
                        #[allow(unreachable_patterns)]
                        other => Err(other),
                    }
                }
            }
        )+
    };
}
