//! Signals held off: received and remembered instead of ending Datum,
//! while it holds a secret's plaintext in a file or has the terminal's
//! echo off, so that it can clean up first.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use signal_hook::low_level::unregister;
use signal_hook::{SigId, flag};

/// Handlers for some signals; when dropped, the signals act as they did
/// before (terminate, or dump core for `SIGQUIT`). Holds of one signal do
/// not nest.
pub struct Held {
    /// The last of the signals received, 0 for none.
    last: Arc<AtomicUsize>,
    signals: Vec<i32>,
    ids: Vec<SigId>,
}

/// Per signal, whether its default action runs: a handler, once installed,
/// stays (signal-hook cannot uninstall one in safe code), so each signal
/// gets one that runs the default action unless the signal is held.
fn defaults(signal: i32) -> std::io::Result<Arc<AtomicBool>> {
    static DEFAULTS: Mutex<BTreeMap<i32, Arc<AtomicBool>>> = Mutex::new(BTreeMap::new());
    let mut all = DEFAULTS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(on) = all.get(&signal) {
        return Ok(Arc::clone(on));
    }
    let on = Arc::new(AtomicBool::new(true));
    flag::register_conditional_default(signal, Arc::clone(&on))?;
    all.insert(signal, Arc::clone(&on));
    Ok(on)
}

impl Held {
    pub fn catch(signals: &[i32]) -> std::io::Result<Held> {
        let mut held = Held {
            last: Arc::new(AtomicUsize::new(0)),
            signals: signals.to_vec(),
            ids: Vec::new(),
        };
        for &signal in signals {
            defaults(signal)?.store(false, Ordering::SeqCst);
            let id = flag::register_usize(signal, Arc::clone(&held.last), signal as usize)?;
            held.ids.push(id);
        }
        Ok(held)
    }

    /// The last signal received since [`Held::catch`].
    pub fn received(&self) -> Option<i32> {
        match self.last.load(Ordering::SeqCst) {
            0 => None,
            s => i32::try_from(s).ok(),
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            unregister(id);
        }
        for &signal in &self.signals {
            if let Ok(on) = defaults(signal) {
                on.store(true, Ordering::SeqCst);
            }
        }
    }
}
