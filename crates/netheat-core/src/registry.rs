//! Registries of implementations by tag, generated from one table.
//!
//! Every kind of decision (flow priority, path choice, task placement,
//! replica placement, transport) has a trait, implementations of it, and a
//! registry that builds one from the tag a config names. [`registry!`]
//! writes both halves of such a registry from a single table of
//! `"tag" => constructor` rows kept with the implementations: the list of
//! known tags (for `--help`, schemas and "did you mean" messages) and the
//! constructor. The two can therefore never disagree, which a hand-kept
//! `const` list beside a `match` allowed.
//!
//! ```
//! trait Greeter {
//!     fn greet(&self) -> String;
//! }
//! struct Plain;
//! struct Loud(u32);
//! impl Greeter for Plain {
//!     fn greet(&self) -> String {
//!         "hello".into()
//!     }
//! }
//! impl Greeter for Loud {
//!     fn greet(&self) -> String {
//!         format!("HELLO{}", "!".repeat(self.0 as usize))
//!     }
//! }
//! netheat_core::registry! {
//!     /// Known greeters.
//!     pub const GREETERS;
//!     /// The greeter named `tag`, if there is one.
//!     pub fn greeter(bangs: u32) -> Box<dyn Greeter> {
//!         "plain" => Box::new(Plain),
//!         "loud" => Box::new(Loud(bangs)),
//!     }
//! }
//! assert_eq!(GREETERS, ["plain", "loud"]);
//! assert_eq!(greeter("loud", 2).unwrap().greet(), "HELLO!!");
//! assert!(greeter("quiet", 0).is_none());
//! ```

/// Declares a registry: `const LIST: &[&str]` of the tags in table order
/// and `fn name(tag: &str, args...) -> Option<T>` building the
/// implementation of a tag (`None` for an unknown tag: the caller turns that
/// into its crate's error, naming the list). See the [module docs](self).
#[macro_export]
macro_rules! registry {
    (
        $(#[$list_meta:meta])*
        $list_vis:vis const $list:ident;
        $(#[$fn_meta:meta])*
        $fn_vis:vis fn $name:ident($($arg:ident : $ty:ty),* $(,)?) -> $out:ty {
            $($tag:literal => $make:expr),+ $(,)?
        }
    ) => {
        $(#[$list_meta])*
        $list_vis const $list: &[&str] = &[$($tag),+];

        $(#[$fn_meta])*
        #[allow(unused_variables)]
        $fn_vis fn $name(tag: &str, $($arg: $ty),*) -> Option<$out> {
            match tag {
                $($tag => Some($make),)+
                _ => None,
            }
        }
    };
}
