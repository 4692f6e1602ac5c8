// An endpoint's summary: what it runs and how it is reached, the SGLang router, autoscaling
// (podplane's ScaledObject and what KEDA's HPA last computed), the warm pool it is on, and a
// managed endpoint's operator state.
import Alert from "@cloudscape-design/components/alert";
import Container from "@cloudscape-design/components/container";
import Header from "@cloudscape-design/components/header";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import Link from "@cloudscape-design/components/link";
import { Time } from "../../components/Time";
import { followHandler } from "../../router";
import { poolPath } from "../pools/model";
import { EndpointStatus } from "./EndpointStatus";
import type { Endpoint } from "./model";

/** "1-4 on running (target 8 per pod); now 3 per pod, HPA wants 2", or "off". */
export function autoscalingText(a: Endpoint["autoscaling"]): string {
  if (!a) return "off";
  const range = `${a.min_replicas ?? 1}-${a.max_replicas ?? "?"}`;
  if (!a.metric) return `${range} on ${a.trigger ?? "-"}`;
  const now = a.current_metric !== null ? `; now ${a.current_metric} per pod` : "";
  const wants = a.desired_replicas !== null ? `, HPA wants ${a.desired_replicas}` : "";
  return `${range} on ${a.metric} (target ${a.target ?? "-"} per pod)${now}${wants}`;
}

/** "cache_aware (1 / 1 router pods Ready)", or "none". */
export function routerText(e: Endpoint): string {
  if (!e.router) return "none";
  const pods = e.router_pods ?? [];
  return `${e.router} (${pods.filter((p) => p.ready).length} / ${pods.length} router pods Ready)`;
}

export function PoolNote({ cluster, pool }: { cluster: string; pool: string }) {
  return (
    <Alert type="info" header={`Served by warm pool ${pool}`}>
      Its pods are the pool's, assigned by label: change how many, or unassign it, on the{" "}
      <Link href={poolPath(cluster, pool)} onFollow={followHandler}>pool's page</Link>.
    </Alert>
  );
}

export function EndpointSummary({ cluster, e }: { cluster: string; e: Endpoint }) {
  const managed = e.kind === "managed";
  return (
    <Container header={<Header variant="h2">Summary</Header>}>
      <KeyValuePairs
        columns={4}
        items={[
          { label: "Status", value: <EndpointStatus value={e.status} /> },
          { label: "Ready replicas", value: <span data-testid="endpoint-ready">{`${e.ready_replicas} / ${e.replicas}`}</span> },
          { label: "Model", value: e.model ?? "-" },
          { label: "Image", value: e.image ?? "-" },
          { label: "Tensor x pipeline", value: `${e.tensor_parallel ?? 1} x ${e.pipeline_parallel}` },
          { label: "Max model length", value: e.max_model_len ? String(e.max_model_len) : "the model's" },
          { label: "Dtype", value: e.dtype ?? "-" },
          { label: "Exposure", value: `${e.exposure}${e.load_balancer ? ` (${e.load_balancer})` : ""}` },
          { label: "Service", value: e.service ? `${e.service}:${e.port ?? "-"}` : "-" },
          { label: "Created", value: <Time value={e.created_at} /> },
          { label: "Autoscaling", value: <span data-testid="endpoint-autoscaling">{autoscalingText(e.autoscaling)}</span> },
          ...(e.engine === "sglang" && !managed ? [{ label: "SGLang router", value: <span data-testid="endpoint-router">{routerText(e)}</span> }] : []),
          ...(e.pool ? [{ label: "Warm pool", value: <Link href={poolPath(cluster, e.pool)} onFollow={followHandler}>{e.pool}</Link> }] : []),
          ...(managed ? [
            { label: "Kind", value: <span data-testid="endpoint-kind">{`managed (${e.state ?? "no state yet"})`}</span> },
            { label: "Routing", value: e.routing ?? "off" },
            { label: "KV cache", value: e.kv_cache ?? "operator default" },
          ] : []),
        ]}
      />
    </Container>
  );
}
