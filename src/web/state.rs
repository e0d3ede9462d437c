//! The server's state: the engine of the current generation, swapped for a
//! new one when `index` switches generations, and the search pool.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use crate::generation::DataDir;
use crate::search::{Engine, SearchConfig};
use crate::store::StoreConfig;

use super::ServeError;

use super::pool::SearchPool;

/// Reads a data folder's settings for serving it: the search settings and
/// the page store's. The binary gives one that reads `config.json`
/// ([`crate::settings_from_config`]); it is read again with each generation
/// served, so every search setting but the pool's (`threads`, `queue`,
/// fixed when the server starts) applies from the next generation.
pub type Settings = Arc<
    dyn Fn(
            &DataDir,
        ) -> Result<(SearchConfig, StoreConfig), Box<dyn std::error::Error + Send + Sync>>
        + Send
        + Sync,
>;

/// What every request reads.
pub struct AppState {
    data: PathBuf,
    settings: Settings,
    engine: RwLock<Arc<Engine>>,
    pool: SearchPool,
}

impl AppState {
    /// Opens the current generation of the data directory `data`.
    pub fn open(data: &Path, settings: Settings) -> Result<AppState, ServeError> {
        let engine = open_engine(&DataDir::open_existing(data)?, &settings)?;
        let config = engine.config();
        let pool = SearchPool::new(config.pool_threads(), config.queue, config.budget());
        Ok(AppState {
            data: data.to_path_buf(),
            settings,
            engine: RwLock::new(Arc::new(engine)),
            pool,
        })
    }

    /// The engine of the generation being served. A request keeps the one
    /// it started with, even if a new generation comes in meanwhile.
    pub fn engine(&self) -> Arc<Engine> {
        match self.engine.read() {
            Ok(engine) => Arc::clone(&engine),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    pub fn pool(&self) -> &SearchPool {
        &self.pool
    }

    /// Opens the current generation if it is not the one being served, then
    /// swaps it in. Returns whether it did. Requests in flight finish on the
    /// engine they hold; the new one is fully opened before any request sees
    /// it, so no request fails across the switch.
    pub fn reload_if_changed(&self) -> Result<bool, ServeError> {
        let data = DataDir::open_existing(&self.data)?;
        let current = data.current_generation()?;
        if current == self.engine().generation() {
            return Ok(false);
        }
        let engine = Arc::new(open_engine(&data, &self.settings)?);
        tracing::info!(generation = engine.generation(), "serving a new generation");
        match self.engine.write() {
            Ok(mut slot) => *slot = engine,
            Err(poisoned) => *poisoned.into_inner() = engine,
        }
        Ok(true)
    }
}

/// The current generation of `data`, with the folder's settings as they
/// are now.
fn open_engine(data: &DataDir, settings: &Settings) -> Result<Engine, ServeError> {
    let (search, store) = settings(data).map_err(ServeError::Settings)?;
    Ok(Engine::open(data, search, &store)?)
}
