CREATE TABLE attempt_tests (
    id integer NOT NULL,
    attempt_id integer NOT NULL,
    test character varying(1000) NOT NULL,
    passed boolean NOT NULL
);

CREATE SEQUENCE attempt_tests_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE attempt_tests_id_seq OWNED BY attempt_tests.id;

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
    kind character varying(16) DEFAULT 'submission'::character varying NOT NULL,
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

CREATE TABLE check_choices (
    id integer NOT NULL,
    student character varying(64) NOT NULL,
    at timestamp with time zone NOT NULL,
    lesson character varying(128) NOT NULL,
    check_id character varying(128) NOT NULL,
    choice integer NOT NULL,
    CONSTRAINT check_choice_not_negative CHECK ((choice >= 0))
);

CREATE SEQUENCE check_choices_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE check_choices_id_seq OWNED BY check_choices.id;

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

CREATE TABLE drafts (
    student character varying(64) NOT NULL,
    exercise character varying(128) NOT NULL,
    code text NOT NULL,
    revision integer NOT NULL,
    saved_at timestamp with time zone NOT NULL,
    saved_by character varying(128) NOT NULL
);

CREATE TABLE grading_jobs (
    id character varying(36) NOT NULL,
    student character varying(64) NOT NULL,
    at timestamp with time zone NOT NULL,
    mode character varying(16) NOT NULL,
    exercises text NOT NULL,
    files text NOT NULL,
    status character varying(16) NOT NULL,
    lease_holder character varying(128),
    lease_until timestamp with time zone,
    result text,
    message text,
    finished_at timestamp with time zone
);

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

CREATE TABLE password_failures (
    id integer NOT NULL,
    at timestamp with time zone NOT NULL,
    session character varying(128) NOT NULL,
    client character varying(64) NOT NULL
);

CREATE SEQUENCE password_failures_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE password_failures_id_seq OWNED BY password_failures.id;

CREATE TABLE roster_students (
    key character varying(64) NOT NULL,
    name character varying(64) NOT NULL,
    email character varying(254) NOT NULL,
    lms_id character varying(128) NOT NULL,
    section character varying(255) NOT NULL,
    added_at timestamp with time zone NOT NULL
);

CREATE TABLE schema_version (
    version integer NOT NULL,
    applied_at timestamp with time zone NOT NULL
);

CREATE TABLE signin_links (
    token_hash character varying(64) NOT NULL,
    student character varying(64) NOT NULL,
    issued_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    revoked_at timestamp with time zone,
    last_used_at timestamp with time zone,
    uses integer DEFAULT 0 NOT NULL
);

CREATE TABLE signin_sessions (
    session_hash character varying(64) NOT NULL,
    student character varying(64) NOT NULL,
    link_hash character varying(64) NOT NULL,
    started_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    ended_at timestamp with time zone
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

ALTER TABLE ONLY attempt_tests ALTER COLUMN id SET DEFAULT nextval('attempt_tests_id_seq'::regclass);

ALTER TABLE ONLY attempts ALTER COLUMN id SET DEFAULT nextval('attempts_id_seq'::regclass);

ALTER TABLE ONLY check_answers ALTER COLUMN id SET DEFAULT nextval('check_answers_id_seq'::regclass);

ALTER TABLE ONLY check_choices ALTER COLUMN id SET DEFAULT nextval('check_choices_id_seq'::regclass);

ALTER TABLE ONLY comments ALTER COLUMN id SET DEFAULT nextval('comments_id_seq'::regclass);

ALTER TABLE ONLY hints ALTER COLUMN id SET DEFAULT nextval('hints_id_seq'::regclass);

ALTER TABLE ONLY lesson_completions ALTER COLUMN id SET DEFAULT nextval('lesson_completions_id_seq'::regclass);

ALTER TABLE ONLY password_failures ALTER COLUMN id SET DEFAULT nextval('password_failures_id_seq'::regclass);

ALTER TABLE ONLY visits ALTER COLUMN id SET DEFAULT nextval('visits_id_seq'::regclass);

INSERT INTO attempt_tests VALUES (1, 1, 'norm', true);
INSERT INTO attempt_tests VALUES (2, 1, 'shape', false);

INSERT INTO attempts VALUES (1, 'ann', '2026-09-01 09:06:00+00', 'rope', 3, 4, false, '{"tests": [{"name": "norm", "passed": true}, {"name": "shape", "status": "failed"}]}', 'ann = 1
', 'submission');
INSERT INTO attempts VALUES (2, 'bob', '2026-09-01 09:07:00+00', 'alibi', 2, 2, true, NULL, NULL, 'submission');
INSERT INTO attempts VALUES (3, 'ann', '2026-09-01 09:14:00+00', 'alibi', 1, 2, true, '{"practice": 1}', 'practice = 1
', 'practice');

INSERT INTO check_answers VALUES (1, 'ann', '2026-09-01 09:03:00+00', 'rope', 'r1', true);
INSERT INTO check_answers VALUES (2, 'bob', '2026-09-01 09:04:00+00', 'rope', 'r2', false);

INSERT INTO check_choices VALUES (1, 'ann', '2026-09-01 09:03:00+00', 'rope', 'r1', 2);

INSERT INTO comments VALUES (1, 'bob', '2026-09-01 09:08:00+00', 'rope', 'Why sin and cos?');

INSERT INTO drafts VALUES ('ann', 'rope', 'draft = 3
', 3, '2026-09-01 09:13:00+00', 'tab-1');

INSERT INTO grading_jobs VALUES ('job-1', 'cem', '2026-09-01 09:09:00+00', 'hidden', '["rope"]', '{"rope.py": "x = 1\n"}', 'queued', 'replica-a', '2026-09-01 09:10:00+00', NULL, NULL, NULL);
INSERT INTO grading_jobs VALUES ('job-2', 'ann', '2026-09-01 09:11:00+00', 'public', '["alibi"]', '{"alibi.py": "y = 2\n"}', 'failed', NULL, NULL, NULL, 'The grader stopped.', '2026-09-01 09:12:00+00');

INSERT INTO hints VALUES (1, 'bob', '2026-09-01 09:05:00+00', 'rope', 2);

INSERT INTO lesson_completions VALUES (1, 'ann', '2026-09-01 09:02:00+00', 'intro');

INSERT INTO password_failures VALUES (1, '2026-09-01 09:18:00+00', 'tab-9', '10.0.0.7');

INSERT INTO roster_students VALUES ('ann@uni.edu', 'Ann Lee', 'ann@uni.edu', '101', 'A', '2026-09-01 09:15:00+00');
INSERT INTO roster_students VALUES ('bob@uni.edu', 'Bob Ng', 'bob@uni.edu', '102', 'B', '2026-09-01 09:15:00+00');

INSERT INTO schema_version VALUES (1, '2026-09-01 08:01:00+00');
INSERT INTO schema_version VALUES (2, '2026-09-01 08:02:00+00');
INSERT INTO schema_version VALUES (3, '2026-09-01 08:03:00+00');
INSERT INTO schema_version VALUES (4, '2026-09-01 08:04:00+00');
INSERT INTO schema_version VALUES (5, '2026-09-01 08:05:00+00');
INSERT INTO schema_version VALUES (6, '2026-09-01 08:06:00+00');

INSERT INTO signin_links VALUES ('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'ann@uni.edu', '2026-09-01 09:16:00+00', '2026-09-02 09:16:00+00', NULL, '2026-09-01 09:17:00+00', 1);

INSERT INTO signin_sessions VALUES ('bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', 'ann@uni.edu', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', '2026-09-01 09:17:00+00', '2026-10-01 09:17:00+00', NULL);

INSERT INTO visits VALUES (1, 'ann', '2026-09-01 09:00:00+00', 'intro');
INSERT INTO visits VALUES (2, 'bob', '2026-09-01 09:01:00+00', 'rope');

SELECT pg_catalog.setval('attempt_tests_id_seq', 2, true);

SELECT pg_catalog.setval('attempts_id_seq', 3, true);

SELECT pg_catalog.setval('check_answers_id_seq', 2, true);

SELECT pg_catalog.setval('check_choices_id_seq', 1, true);

SELECT pg_catalog.setval('comments_id_seq', 1, true);

SELECT pg_catalog.setval('hints_id_seq', 1, true);

SELECT pg_catalog.setval('lesson_completions_id_seq', 1, true);

SELECT pg_catalog.setval('password_failures_id_seq', 1, true);

SELECT pg_catalog.setval('visits_id_seq', 2, true);

ALTER TABLE ONLY attempt_tests
    ADD CONSTRAINT attempt_tests_pkey PRIMARY KEY (id);

ALTER TABLE ONLY attempts
    ADD CONSTRAINT attempts_pkey PRIMARY KEY (id);

ALTER TABLE ONLY check_answers
    ADD CONSTRAINT check_answers_pkey PRIMARY KEY (id);

ALTER TABLE ONLY check_choices
    ADD CONSTRAINT check_choices_pkey PRIMARY KEY (id);

ALTER TABLE ONLY comments
    ADD CONSTRAINT comments_pkey PRIMARY KEY (id);

ALTER TABLE ONLY drafts
    ADD CONSTRAINT drafts_pkey PRIMARY KEY (student, exercise);

ALTER TABLE ONLY grading_jobs
    ADD CONSTRAINT grading_jobs_pkey PRIMARY KEY (id);

ALTER TABLE ONLY hints
    ADD CONSTRAINT hints_pkey PRIMARY KEY (id);

ALTER TABLE ONLY lesson_completions
    ADD CONSTRAINT lesson_completions_pkey PRIMARY KEY (id);

ALTER TABLE ONLY password_failures
    ADD CONSTRAINT password_failures_pkey PRIMARY KEY (id);

ALTER TABLE ONLY roster_students
    ADD CONSTRAINT roster_students_pkey PRIMARY KEY (key);

ALTER TABLE ONLY schema_version
    ADD CONSTRAINT schema_version_pkey PRIMARY KEY (version);

ALTER TABLE ONLY signin_links
    ADD CONSTRAINT signin_links_pkey PRIMARY KEY (token_hash);

ALTER TABLE ONLY signin_sessions
    ADD CONSTRAINT signin_sessions_pkey PRIMARY KEY (session_hash);

ALTER TABLE ONLY visits
    ADD CONSTRAINT visits_pkey PRIMARY KEY (id);

CREATE INDEX ix_attempt_tests_attempt_id ON attempt_tests USING btree (attempt_id);

CREATE INDEX ix_attempts_student ON attempts USING btree (student);

CREATE INDEX ix_check_answers_student ON check_answers USING btree (student);

CREATE INDEX ix_check_choices_student ON check_choices USING btree (student);

CREATE INDEX ix_comments_lesson ON comments USING btree (lesson);

CREATE INDEX ix_comments_student ON comments USING btree (student);

CREATE INDEX ix_grading_jobs_at ON grading_jobs USING btree (at);

CREATE INDEX ix_grading_jobs_student ON grading_jobs USING btree (student);

CREATE INDEX ix_hints_student ON hints USING btree (student);

CREATE INDEX ix_lesson_completions_student ON lesson_completions USING btree (student);

CREATE INDEX ix_password_failures_at ON password_failures USING btree (at);

CREATE INDEX ix_password_failures_client ON password_failures USING btree (client);

CREATE INDEX ix_password_failures_session ON password_failures USING btree (session);

CREATE INDEX ix_signin_links_student ON signin_links USING btree (student);

CREATE INDEX ix_signin_sessions_student ON signin_sessions USING btree (student);

CREATE INDEX ix_visits_student ON visits USING btree (student);

CREATE UNIQUE INDEX one_pending_job_per_student ON grading_jobs USING btree (student) WHERE ((status)::text = 'queued'::text);

ALTER TABLE ONLY attempt_tests
    ADD CONSTRAINT attempt_tests_attempt_id_fkey FOREIGN KEY (attempt_id) REFERENCES attempts(id) ON DELETE CASCADE;
