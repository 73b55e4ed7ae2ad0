-- mysql/grants.sql - the three database accounts of the trust boundary
-- (README "Security model"), each with the least privileges its programs
-- need. Run it as a database administrator AFTER setting, in the same
-- session, the database name, the client host the accounts may connect
-- from and their passwords (no password is ever in this file):
--
--   SET @mxq_db = 'mxq', @mxq_host = 'localhost';
--   SET @mxqclient_pw = '...', @mxqd_pw = '...', @mxqadmin_pw = '...';
--   SOURCE /usr/local/share/mxq/mysql/grants.sql;
--
-- Run it once per client host pattern (@mxq_host, e.g. '10.1.%'). It is
-- safe to run again: each account is (re)created with its password and
-- exactly the privileges below (CREATE OR REPLACE USER).
--
--   mxqclient  the set-id tools (mxqsub, mxqdump, mxqkill, read-only
--              mxqadmin): read everything, add groups and jobs, and change
--              nothing but mxq_group.group_status and mxq_job.job_status
--              (cancelling). Never mxq_daemon, mxq_power*, the schema.
--   mxqd       the daemons (nodes, power manager): read and write rows, no
--              DDL, no GRANT.
--   mxqadmin   mutating mxqadmin and `db upgrade`: everything on the
--              database, DDL and triggers included (it defines the
--              counter triggers, which then run with its rights).

SET @mxq_grants_db = CONCAT('`', REPLACE(@mxq_db, '`', '``'), '`');
SET @mxq_grants_ok = @mxq_db IS NOT NULL AND @mxq_host IS NOT NULL
    AND @mxqclient_pw IS NOT NULL AND @mxqd_pw IS NOT NULL AND @mxqadmin_pw IS NOT NULL;
-- a clear error instead of accounts without passwords
SET @mxq_grants_check = IF(@mxq_grants_ok, 'DO 0',
    'SIGNAL SQLSTATE ''45000'' SET MESSAGE_TEXT = ''grants.sql: set @mxq_db, @mxq_host, @mxqclient_pw, @mxqd_pw and @mxqadmin_pw first''');
PREPARE mxq_grants_st FROM @mxq_grants_check;
EXECUTE mxq_grants_st;

SET @mxq_grants_client = CONCAT('''mxqclient''@', QUOTE(@mxq_host));
SET @mxq_grants_daemon = CONCAT('''mxqd''@', QUOTE(@mxq_host));
SET @mxq_grants_admin  = CONCAT('''mxqadmin''@', QUOTE(@mxq_host));

-- accounts, (re)created with exactly the privileges below
SET @q = CONCAT('CREATE OR REPLACE USER ', @mxq_grants_client, ' IDENTIFIED BY ', QUOTE(@mxqclient_pw));
PREPARE mxq_grants_st FROM @q; EXECUTE mxq_grants_st;
SET @q = CONCAT('CREATE OR REPLACE USER ', @mxq_grants_daemon, ' IDENTIFIED BY ', QUOTE(@mxqd_pw));
PREPARE mxq_grants_st FROM @q; EXECUTE mxq_grants_st;
SET @q = CONCAT('CREATE OR REPLACE USER ', @mxq_grants_admin, ' IDENTIFIED BY ', QUOTE(@mxqadmin_pw));
PREPARE mxq_grants_st FROM @q; EXECUTE mxq_grants_st;

-- mxqclient: read all; add groups and jobs; cancel (two columns)
SET @q = CONCAT('GRANT SELECT ON ', @mxq_grants_db, '.* TO ', @mxq_grants_client);
PREPARE mxq_grants_st FROM @q; EXECUTE mxq_grants_st;
SET @q = CONCAT('GRANT INSERT, UPDATE (group_status) ON ', @mxq_grants_db, '.mxq_group TO ', @mxq_grants_client);
PREPARE mxq_grants_st FROM @q; EXECUTE mxq_grants_st;
SET @q = CONCAT('GRANT INSERT, UPDATE (job_status) ON ', @mxq_grants_db, '.mxq_job TO ', @mxq_grants_client);
PREPARE mxq_grants_st FROM @q; EXECUTE mxq_grants_st;

-- mxqd: rows, not the schema
SET @q = CONCAT('GRANT SELECT, INSERT, UPDATE, DELETE ON ', @mxq_grants_db, '.* TO ', @mxq_grants_daemon);
PREPARE mxq_grants_st FROM @q; EXECUTE mxq_grants_st;

-- mxqadmin: everything on this database (db upgrade creates tables and triggers)
SET @q = CONCAT('GRANT ALL PRIVILEGES ON ', @mxq_grants_db, '.* TO ', @mxq_grants_admin);
PREPARE mxq_grants_st FROM @q; EXECUTE mxq_grants_st;

DEALLOCATE PREPARE mxq_grants_st;
FLUSH PRIVILEGES;
