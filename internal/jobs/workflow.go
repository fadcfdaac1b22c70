package jobs

// QueueWorkflows holds the steps of workflow runs (issue 34) apart from
// dispatch: a step decides and writes rows, and a send step's message is
// then a dispatch job of the transactional lane like any API send's.
const QueueWorkflows = "workflows"

// WorkflowStep runs one reached step of a workflow run. The step's row
// (workflow_run_steps) is the truth: a job whose step has ended does
// nothing, so a job run again after a crash never repeats a step.
type WorkflowStep struct {
	WorkspaceID string `json:"wid"`
	RunID       string `json:"run"`
	Step        int    `json:"step"`
}

// Kind implements river.JobArgs.
func (WorkflowStep) Kind() string { return "workflow_step" }

// WorkflowStepMaxAttempts bounds River's retries of a step that keeps
// failing (a database outage); the run is failed after the last.
const WorkflowStepMaxAttempts = 10

// WorkflowSteps runs reached delay and send steps of many runs together
// (issue 34's 100,000 delays ending at once): steps due at the same
// instant share a job, and one run of it decides them, accepts their
// sends and reaches their next steps in one transaction. As with
// WorkflowStep, the step rows are the truth: a step that has ended (run
// before a crash, canceled) is left as is.
type WorkflowSteps struct {
	WorkspaceID string    `json:"wid"`
	Steps       []StepRef `json:"steps"`
}

// StepRef names one step of one run.
type StepRef struct {
	RunID string `json:"run"`
	Step  int    `json:"step"`
}

// Kind implements river.JobArgs.
func (WorkflowSteps) Kind() string { return "workflow_steps" }

// WorkflowStepsMax is the most steps one WorkflowSteps job carries:
// enough to amortize a transaction, few enough that several workers
// share a large batch.
const WorkflowStepsMax = 500

// WorkflowStepsEarly is how long before its steps' instant a
// WorkflowSteps job is scheduled: River's scheduler makes a scheduled job
// runnable at its first pass after its time (SchedulerInterval), so a job
// scheduled for the instant itself would start up to that much late. Its
// worker waits for the instant.
const WorkflowStepsEarly = SchedulerInterval
