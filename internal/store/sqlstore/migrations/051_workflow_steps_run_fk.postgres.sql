-- A run's step rows are written by the transaction that inserts the run
-- (the trigger's, in one statement with it: sqlstore/workflow.go
-- startTogether) or by a step's job, which first holds the run row's
-- write lock (LockWorkflowRun, LockWorkflowRunStates): the run exists
-- whenever one of its steps is written, so the foreign key's check, a
-- read of workflow_runs per step row and a trigger's largest check, only
-- repeats what the writer already knows (issue 34). An erased profile's
-- runs take their steps explicitly (DeleteRecipient) instead of through
-- the cascade.
ALTER TABLE workflow_run_steps DROP CONSTRAINT IF EXISTS workflow_run_steps_run_id_fkey;
