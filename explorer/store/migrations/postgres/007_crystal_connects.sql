-- PostgreSQL twin of ../007_crystal_connects.sql: what a crystal connects, the two stored sources it bridges.
-- PostgreSQL alters a table its indexes depend on, so idx_crystals_session stays.
ALTER TABLE wander_crystals ADD COLUMN connects JSON NOT NULL DEFAULT '[]';
