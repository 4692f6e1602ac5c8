// One job: status, restarts spent of the budget and the last fault, each pod with its node and
// that node's health verdict, events, and live logs. Stop and Delete through confirmations.
// Opened with ?op=<id> right after a submit, it follows that operation until the job exists.
import Alert from "@cloudscape-design/components/alert";
import Button from "@cloudscape-design/components/button";
import Container from "@cloudscape-design/components/container";
import Header from "@cloudscape-design/components/header";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import Link from "@cloudscape-design/components/link";
import SpaceBetween from "@cloudscape-design/components/space-between";
import StatusIndicator from "@cloudscape-design/components/status-indicator";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { problemOf } from "../../api/problem";
import { NotLoaded } from "../../components/NotLoaded";
import { Time } from "../../components/Time";
import { deniedReason } from "../../permissions";
import { navigate, useSearch } from "../../router";
import type { PageProps } from "../../routes";
import { usePrincipal } from "../../session";
import { OperationContainer } from "../clusters/ProgressPanel";
import { DiagnoseButton } from "../diagnose/DiagnoseButton";
import { EventsTable, FilesTable, PodsTable } from "./JobTables";
import { JobLogs } from "./JobLogs";
import { DeleteJobModal, StopJobModal } from "./JobModals";
import { JobStatus } from "./JobStatus";
import { DONE, jobKey, jobsKey, jobsPath, restartsText, type Job } from "./model";

export default function JobDetail({ params }: PageProps) {
  const { cluster, job: name } = params;
  const op = useSearch().get("op");
  const client = useQueryClient();
  const role = usePrincipal().role;
  const [modal, setModal] = useState<"stop" | "delete" | null>(null);
  const query = useQuery({
    queryKey: jobKey(cluster, name),
    queryFn: async () => unwrap(api.GET("/api/v1/clusters/{cluster}/jobs/{job}", { params: { path: { cluster, job: name } } })),
    refetchInterval: (q) => (q.state.data && DONE.has(q.state.data.status) ? false : 3000),
    retry: (n, err) => problemOf(err).status !== 404 && n < 2,
  });
  const job = query.data;
  const progress = op && <OperationContainer opId={op} cluster={cluster} header="Submit operation" />;
  if (!job) return <NotLoaded noun="job" name={name} query={query} op={op} progress={progress} />;
  const stopDenied = deniedReason(role, "job.cancel");
  const deleteDenied = deniedReason(role, "job.delete");
  const done = DONE.has(job.status);
  const finished = (opId: string | null) => {
    setModal(null);
    void client.invalidateQueries({ queryKey: jobsKey(cluster) });
    if (opId) navigate(`/operations/${opId}`);
  };
  return (
    <SpaceBetween size="l">
      <Header
        variant="h1"
        description={`${job.kind}${job.recipe ? ` from recipe ${job.recipe}` : job.image ? ` running ${job.image}` : ""} on ${cluster}`}
        info={<span data-testid="job-status"><JobStatus value={job.stalled ? "Stalled" : job.status} /></span>}
        actions={
          <SpaceBetween direction="horizontal" size="xs">
            <DiagnoseButton subject={{ kind: "job", cluster, job: name }} />
            <Button disabled={Boolean(stopDenied) || done} disabledReason={stopDenied ?? (done ? `The job is ${job.status}.` : undefined)} onClick={() => setModal("stop")}>
              Stop
            </Button>
            <Button disabled={Boolean(deleteDenied)} disabledReason={deleteDenied} onClick={() => setModal("delete")}>
              Delete
            </Button>
          </SpaceBetween>
        }
      >
        {job.name}
      </Header>
      {progress}
      {job.stalled && (
        <Alert type="warning" header="Stalled: the logs stopped">
          No running pod has written a log line for {Math.round(job.stalled.since_seconds / 60)} minutes; the last came from{" "}
          {job.stalled.pod} at <Time value={job.stalled.last_line_at} />. A hung collective (NCCL) looks like this; the
          pods still run.
        </Alert>
      )}
      {job.last_fault && <FaultAlert job={job} />}
      <Container header={<Header variant="h2">Summary</Header>}>
        <KeyValuePairs
          columns={4}
          items={[
            { label: "Status", value: <JobStatus value={job.status} /> },
            { label: "Replicas", value: String(job.replicas) },
            { label: "Restarts (spent of budget)", value: <span data-testid="job-restarts">{restartsText(job.restarts)}</span> },
            { label: "Created", value: <Time value={job.created_at} /> },
            { label: "Started", value: <Time value={job.started_at} /> },
            { label: "Completed", value: <Time value={job.completed_at} /> },
            { label: "Checkpoints", value: job.outputs.checkpoints ?? "-" },
            { label: "Outputs", value: job.outputs.outputs ?? "-" },
            ...(job.mlflow ? [{ label: "MLflow run", value: <MlflowRun run={job.mlflow} /> }] : []),
          ]}
        />
      </Container>
      <PodsTable pods={job.pods} />
      <FilesTable files={job.files} />
      <JobLogs cluster={cluster} job={name} running={!done} />
      <EventsTable cluster={cluster} job={name} version={job.status + job.restarts.spent + job.pods.length} />
      {modal === "stop" && <StopJobModal cluster={cluster} job={name} onClose={() => setModal(null)} onDone={finished} />}
      {modal === "delete" && (
        <DeleteJobModal
          cluster={cluster}
          job={name}
          onClose={() => setModal(null)}
          onDone={() => {
            setModal(null);
            void client.invalidateQueries({ queryKey: jobsKey(cluster) });
            navigate(jobsPath(cluster));
          }}
        />
      )}
    </SpaceBetween>
  );
}

function FaultAlert({ job }: { job: Job }) {
  const f = job.last_fault;
  if (!f) return null;
  const where = [...f.instance_ids, ...f.pods].join(", ");
  return (
    <Alert type="warning" header={`Last fault${f.reason ? `: ${f.reason}` : ""}`}>
      {f.message ?? "The operator restarted the job."}
      {where && ` (${where})`}
      {f.restart_type && ` · restart: ${f.restart_type}`}
    </Alert>
  );
}

// The run the job logged to SageMaker MLflow (the mlflow feature): a link into the tracking
// server's UI, with the last loss when there is one.
function MlflowRun({ run }: { run: NonNullable<Job["mlflow"]> }) {
  if (run.error) return <StatusIndicator type="warning">{run.error}</StatusIndicator>;
  if (!run.run_id) return <span data-testid="job-mlflow">no run yet ({run.experiment})</span>;
  const loss = run.metrics.train_loss;
  const label = `${run.run_name ?? run.run_id} (${run.status ?? "?"}${loss === undefined ? "" : `, train_loss ${loss}`})`;
  return run.url ? (
    <Link external href={run.url} data-testid="job-mlflow">
      {label}
    </Link>
  ) : (
    <span data-testid="job-mlflow">{label}</span>
  );
}
