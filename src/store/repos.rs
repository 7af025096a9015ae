//! The repositories table: which root each repository name stands for.

use super::{Store, StoreError, q};

impl Store {
    pub async fn upsert_repository(&self, name: &str, root: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO repositories (name, root_path, last_indexed) VALUES ($1, $2, now())
             ON CONFLICT (name) DO UPDATE SET root_path = EXCLUDED.root_path, last_indexed = now()",
        )
        .bind(name)
        .bind(root)
        .execute(&self.pool)
        .await
        .map_err(q("recording the repository"))?;
        Ok(())
    }
}
