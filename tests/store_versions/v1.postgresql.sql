CREATE TABLE attempts (
    id integer NOT NULL,
    student character varying(64) NOT NULL,
    at timestamp with time zone NOT NULL,
    exercise character varying(128) NOT NULL,
    score double precision NOT NULL,
    max_score double precision NOT NULL,
    public_tests_only boolean NOT NULL,
    details text,
    code text,
    CONSTRAINT score_in_range CHECK (((max_score > (0)::double precision) AND (score >= (0)::double precision) AND (score <= max_score)))
);

CREATE SEQUENCE attempts_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE attempts_id_seq OWNED BY attempts.id;

CREATE TABLE check_answers (
    id integer NOT NULL,
    student character varying(64) NOT NULL,
    at timestamp with time zone NOT NULL,
    lesson character varying(128) NOT NULL,
    check_id character varying(128) NOT NULL,
    correct boolean NOT NULL
);

CREATE SEQUENCE check_answers_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE check_answers_id_seq OWNED BY check_answers.id;

CREATE TABLE comments (
    id integer NOT NULL,
    student character varying(64) NOT NULL,
    at timestamp with time zone NOT NULL,
    lesson character varying(128) NOT NULL,
    text character varying(2000) NOT NULL
);

CREATE SEQUENCE comments_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE comments_id_seq OWNED BY comments.id;

CREATE TABLE hints (
    id integer NOT NULL,
    student character varying(64) NOT NULL,
    at timestamp with time zone NOT NULL,
    exercise character varying(128) NOT NULL,
    tier integer NOT NULL,
    CONSTRAINT hint_tier_positive CHECK ((tier >= 1))
);

CREATE SEQUENCE hints_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE hints_id_seq OWNED BY hints.id;

CREATE TABLE lesson_completions (
    id integer NOT NULL,
    student character varying(64) NOT NULL,
    at timestamp with time zone NOT NULL,
    lesson character varying(128) NOT NULL
);

CREATE SEQUENCE lesson_completions_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE lesson_completions_id_seq OWNED BY lesson_completions.id;

CREATE TABLE schema_version (
    version integer NOT NULL,
    applied_at timestamp with time zone NOT NULL
);

CREATE TABLE visits (
    id integer NOT NULL,
    student character varying(64) NOT NULL,
    at timestamp with time zone NOT NULL,
    lesson character varying(128) NOT NULL
);

CREATE SEQUENCE visits_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE visits_id_seq OWNED BY visits.id;

ALTER TABLE ONLY attempts ALTER COLUMN id SET DEFAULT nextval('attempts_id_seq'::regclass);

ALTER TABLE ONLY check_answers ALTER COLUMN id SET DEFAULT nextval('check_answers_id_seq'::regclass);

ALTER TABLE ONLY comments ALTER COLUMN id SET DEFAULT nextval('comments_id_seq'::regclass);

ALTER TABLE ONLY hints ALTER COLUMN id SET DEFAULT nextval('hints_id_seq'::regclass);

ALTER TABLE ONLY lesson_completions ALTER COLUMN id SET DEFAULT nextval('lesson_completions_id_seq'::regclass);

ALTER TABLE ONLY visits ALTER COLUMN id SET DEFAULT nextval('visits_id_seq'::regclass);

INSERT INTO attempts VALUES (1, 'ann', '2026-09-01 09:06:00+00', 'rope', 3, 4, false, '{"tests": [{"name": "norm", "passed": true}, {"name": "shape", "status": "failed"}]}', 'ann = 1
');
INSERT INTO attempts VALUES (2, 'bob', '2026-09-01 09:07:00+00', 'alibi', 2, 2, true, NULL, NULL);

INSERT INTO check_answers VALUES (1, 'ann', '2026-09-01 09:03:00+00', 'rope', 'r1', true);
INSERT INTO check_answers VALUES (2, 'bob', '2026-09-01 09:04:00+00', 'rope', 'r2', false);

INSERT INTO comments VALUES (1, 'bob', '2026-09-01 09:08:00+00', 'rope', 'Why sin and cos?');

INSERT INTO hints VALUES (1, 'bob', '2026-09-01 09:05:00+00', 'rope', 2);

INSERT INTO lesson_completions VALUES (1, 'ann', '2026-09-01 09:02:00+00', 'intro');

INSERT INTO schema_version VALUES (1, '2026-09-01 08:01:00+00');

INSERT INTO visits VALUES (1, 'ann', '2026-09-01 09:00:00+00', 'intro');
INSERT INTO visits VALUES (2, 'bob', '2026-09-01 09:01:00+00', 'rope');

SELECT pg_catalog.setval('attempts_id_seq', 2, true);

SELECT pg_catalog.setval('check_answers_id_seq', 2, true);

SELECT pg_catalog.setval('comments_id_seq', 1, true);

SELECT pg_catalog.setval('hints_id_seq', 1, true);

SELECT pg_catalog.setval('lesson_completions_id_seq', 1, true);

SELECT pg_catalog.setval('visits_id_seq', 2, true);

ALTER TABLE ONLY attempts
    ADD CONSTRAINT attempts_pkey PRIMARY KEY (id);

ALTER TABLE ONLY check_answers
    ADD CONSTRAINT check_answers_pkey PRIMARY KEY (id);

ALTER TABLE ONLY comments
    ADD CONSTRAINT comments_pkey PRIMARY KEY (id);

ALTER TABLE ONLY hints
    ADD CONSTRAINT hints_pkey PRIMARY KEY (id);

ALTER TABLE ONLY lesson_completions
    ADD CONSTRAINT lesson_completions_pkey PRIMARY KEY (id);

ALTER TABLE ONLY schema_version
    ADD CONSTRAINT schema_version_pkey PRIMARY KEY (version);

ALTER TABLE ONLY visits
    ADD CONSTRAINT visits_pkey PRIMARY KEY (id);

CREATE INDEX ix_attempts_student ON attempts USING btree (student);

CREATE INDEX ix_check_answers_student ON check_answers USING btree (student);

CREATE INDEX ix_comments_lesson ON comments USING btree (lesson);

CREATE INDEX ix_comments_student ON comments USING btree (student);

CREATE INDEX ix_hints_student ON hints USING btree (student);

CREATE INDEX ix_lesson_completions_student ON lesson_completions USING btree (student);

CREATE INDEX ix_visits_student ON visits USING btree (student);
