BEGIN TRANSACTION;
CREATE TABLE attempt_tests (
	id INTEGER NOT NULL, 
	attempt_id INTEGER NOT NULL, 
	test VARCHAR(1000) NOT NULL, 
	passed BOOLEAN NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(attempt_id) REFERENCES attempts (id) ON DELETE CASCADE
);
INSERT INTO "attempt_tests" VALUES(1,1,'norm',1);
INSERT INTO "attempt_tests" VALUES(2,1,'shape',0);
CREATE TABLE attempts (
	id INTEGER NOT NULL, 
	student VARCHAR(64) NOT NULL, 
	at DATETIME NOT NULL, 
	exercise VARCHAR(128) NOT NULL, 
	score FLOAT NOT NULL, 
	max_score FLOAT NOT NULL, 
	public_tests_only BOOLEAN NOT NULL, 
	details TEXT, 
	code TEXT, 
	PRIMARY KEY (id), 
	CONSTRAINT score_in_range CHECK (max_score > 0 AND score >= 0 AND score <= max_score)
);
INSERT INTO "attempts" VALUES(1,'ann','2026-09-01 09:06:00.000000','rope',3.0,4.0,0,'{"tests": [{"name": "norm", "passed": true}, {"name": "shape", "status": "failed"}]}','ann = 1
');
INSERT INTO "attempts" VALUES(2,'bob','2026-09-01 09:07:00.000000','alibi',2.0,2.0,1,NULL,NULL);
CREATE TABLE check_answers (
	id INTEGER NOT NULL, 
	student VARCHAR(64) NOT NULL, 
	at DATETIME NOT NULL, 
	lesson VARCHAR(128) NOT NULL, 
	check_id VARCHAR(128) NOT NULL, 
	correct BOOLEAN NOT NULL, 
	PRIMARY KEY (id)
);
INSERT INTO "check_answers" VALUES(1,'ann','2026-09-01 09:03:00.000000','rope','r1',1);
INSERT INTO "check_answers" VALUES(2,'bob','2026-09-01 09:04:00.000000','rope','r2',0);
CREATE TABLE comments (
	id INTEGER NOT NULL, 
	student VARCHAR(64) NOT NULL, 
	at DATETIME NOT NULL, 
	lesson VARCHAR(128) NOT NULL, 
	text VARCHAR(2000) NOT NULL, 
	PRIMARY KEY (id)
);
INSERT INTO "comments" VALUES(1,'bob','2026-09-01 09:08:00.000000','rope','Why sin and cos?');
CREATE TABLE grading_jobs (
	id VARCHAR(36) NOT NULL, 
	student VARCHAR(64) NOT NULL, 
	at DATETIME NOT NULL, 
	mode VARCHAR(16) NOT NULL, 
	exercises TEXT NOT NULL, 
	files TEXT NOT NULL, 
	status VARCHAR(16) NOT NULL, 
	lease_holder VARCHAR(128), 
	lease_until DATETIME, 
	result TEXT, 
	message TEXT, 
	finished_at DATETIME, 
	PRIMARY KEY (id)
);
INSERT INTO "grading_jobs" VALUES('job-1','cem','2026-09-01 09:09:00.000000','hidden','["rope"]','{"rope.py": "x = 1\n"}','queued','replica-a','2026-09-01 09:10:00.000000',NULL,NULL,NULL);
INSERT INTO "grading_jobs" VALUES('job-2','ann','2026-09-01 09:11:00.000000','public','["alibi"]','{"alibi.py": "y = 2\n"}','failed',NULL,NULL,NULL,'The grader stopped.','2026-09-01 09:12:00.000000');
CREATE TABLE hints (
	id INTEGER NOT NULL, 
	student VARCHAR(64) NOT NULL, 
	at DATETIME NOT NULL, 
	exercise VARCHAR(128) NOT NULL, 
	tier INTEGER NOT NULL, 
	PRIMARY KEY (id), 
	CONSTRAINT hint_tier_positive CHECK (tier >= 1)
);
INSERT INTO "hints" VALUES(1,'bob','2026-09-01 09:05:00.000000','rope',2);
CREATE TABLE lesson_completions (
	id INTEGER NOT NULL, 
	student VARCHAR(64) NOT NULL, 
	at DATETIME NOT NULL, 
	lesson VARCHAR(128) NOT NULL, 
	PRIMARY KEY (id)
);
INSERT INTO "lesson_completions" VALUES(1,'ann','2026-09-01 09:02:00.000000','intro');
CREATE TABLE schema_version (
	version INTEGER NOT NULL, 
	applied_at DATETIME NOT NULL, 
	PRIMARY KEY (version)
);
INSERT INTO "schema_version" VALUES(1,'2026-09-01 08:01:00.000000');
INSERT INTO "schema_version" VALUES(2,'2026-09-01 08:02:00.000000');
INSERT INTO "schema_version" VALUES(3,'2026-09-01 08:03:00.000000');
CREATE TABLE visits (
	id INTEGER NOT NULL, 
	student VARCHAR(64) NOT NULL, 
	at DATETIME NOT NULL, 
	lesson VARCHAR(128) NOT NULL, 
	PRIMARY KEY (id)
);
INSERT INTO "visits" VALUES(1,'ann','2026-09-01 09:00:00.000000','intro');
INSERT INTO "visits" VALUES(2,'bob','2026-09-01 09:01:00.000000','rope');
CREATE INDEX ix_attempts_student ON attempts (student);
CREATE INDEX ix_visits_student ON visits (student);
CREATE INDEX ix_lesson_completions_student ON lesson_completions (student);
CREATE INDEX ix_check_answers_student ON check_answers (student);
CREATE INDEX ix_hints_student ON hints (student);
CREATE INDEX ix_comments_lesson ON comments (lesson);
CREATE INDEX ix_comments_student ON comments (student);
CREATE UNIQUE INDEX one_pending_job_per_student ON grading_jobs (student) WHERE status = 'queued';
CREATE INDEX ix_grading_jobs_at ON grading_jobs (at);
CREATE INDEX ix_grading_jobs_student ON grading_jobs (student);
CREATE INDEX ix_attempt_tests_attempt_id ON attempt_tests (attempt_id);
COMMIT;
