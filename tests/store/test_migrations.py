"""A store opens without alembic when its database is at the newest migration, so the revision it
compares with must be alembic's own head; an older database is still migrated."""

from __future__ import annotations

import sqlalchemy as sa
from alembic.config import Config
from alembic.script import ScriptDirectory

from assay.store import Store
from assay.store.base import HEAD_REVISION, MIGRATIONS


def test_the_head_revision_is_alembics():
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    assert ScriptDirectory.from_config(config).get_current_head() == HEAD_REVISION


def test_an_older_database_is_migrated_on_open(tmp_path):
    url = f"sqlite:///{tmp_path / 'assay.db'}"
    Store(url).close()
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE evaluation_taxonomies"))
        conn.execute(sa.text("ALTER TABLE runs DROP COLUMN inputs"))
        conn.execute(sa.text("DROP TABLE item_usage"))
        conn.execute(sa.text("DROP TABLE rule_events"))
        conn.execute(sa.text("DROP TABLE evaluation_rules"))
        conn.execute(sa.text("DROP TABLE schedule_runs"))  # its insight_id column (0016) goes with it
        conn.execute(sa.text("DROP TABLE schedules"))
        conn.execute(sa.text("DROP TABLE alerts"))
        conn.execute(sa.text("DROP TABLE insights"))
        conn.execute(sa.text("DROP TABLE labels"))
        conn.execute(sa.text("DROP TABLE review_items"))
        conn.execute(sa.text("DROP TABLE review_queues"))
        conn.execute(sa.text("DROP TABLE agents"))
        conn.execute(sa.text("ALTER TABLE evaluators DROP COLUMN details"))
        conn.execute(sa.text("DROP TABLE jobs"))
        conn.execute(sa.text("DROP TABLE insight_monitors"))
        for table in ("conversations", "conversation_items", "ingestion_keys"):  # 0021
            conn.execute(sa.text(f"DROP TABLE {table}"))
        conn.execute(sa.text("DROP TABLE model_batches"))  # 0022
        conn.execute(sa.text("UPDATE alembic_version SET version_num = '0008'"))
    engine.dispose()
    store = Store(url)
    try:
        with store.engine.connect() as conn:
            assert conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar_one() == HEAD_REVISION
            conn.execute(sa.text("SELECT count(*) FROM evaluation_taxonomies")).scalar_one()
            conn.execute(sa.text("SELECT count(inputs) FROM runs")).scalar_one()
            conn.execute(sa.text("SELECT count(*) FROM item_usage")).scalar_one()
            conn.execute(sa.text("SELECT count(*) FROM rule_events")).scalar_one()
            conn.execute(sa.text("SELECT count(*) FROM schedule_runs")).scalar_one()
            conn.execute(sa.text("SELECT count(*) FROM alerts")).scalar_one()
            conn.execute(sa.text("SELECT count(*) FROM insights")).scalar_one()
            conn.execute(sa.text("SELECT count(*) FROM labels")).scalar_one()
            conn.execute(sa.text("SELECT count(*) FROM review_items")).scalar_one()
            conn.execute(sa.text("SELECT count(insight_id) FROM schedule_runs")).scalar_one()
            conn.execute(sa.text("SELECT count(*) FROM agents")).scalar_one()
            conn.execute(sa.text("SELECT count(details) FROM evaluators")).scalar_one()
            conn.execute(sa.text("SELECT count(runner) FROM jobs")).scalar_one()
            conn.execute(sa.text("SELECT count(next_run_at) FROM insight_monitors")).scalar_one()
            conn.execute(sa.text("SELECT count(item) FROM conversation_items")).scalar_one()
            conn.execute(sa.text("SELECT count(key) FROM ingestion_keys")).scalar_one()
            conn.execute(sa.text("SELECT count(fired_at) FROM schedule_runs")).scalar_one()
            conn.execute(sa.text("SELECT count(next_attempt_at), count(attempt_log) FROM alerts")).one()
            conn.execute(sa.text("SELECT count(batch_id) FROM model_batches")).scalar_one()
    finally:
        store.close()
