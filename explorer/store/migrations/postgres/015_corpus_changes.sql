-- PostgreSQL twin of ../015_corpus_changes.sql (read it for why). The trigger is deferred to the commit and adds
-- one once per transaction: the row is locked only while its transaction commits, so two writers never wait on
-- each other for it in the middle of their work (no deadlock), and a reader sees the new count only once the
-- change it counts is visible too. Only the columns the walk's corpus reads count: a node's access count does not.

CREATE TABLE corpus_changes (version BIGINT NOT NULL);
INSERT INTO corpus_changes VALUES (0);

CREATE FUNCTION corpus_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('explorer.corpus_changed', true) IS DISTINCT FROM pg_current_xact_id()::text THEN
        UPDATE corpus_changes SET version = version + 1;
        PERFORM set_config('explorer.corpus_changed', pg_current_xact_id()::text, true);
    END IF;
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER nodes_changed
    AFTER INSERT OR DELETE OR UPDATE OF id, type, text, embedding, document_id, domain, entity, parent_ids,
        importance, confidence, is_latest
    ON nodes DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION corpus_changed();
CREATE CONSTRAINT TRIGGER relations_changed
    AFTER INSERT OR DELETE OR UPDATE OF source_id, target_id, type
    ON relations DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION corpus_changed();
CREATE CONSTRAINT TRIGGER documents_changed
    AFTER DELETE OR UPDATE OF domain, title
    ON documents DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION corpus_changed();
