// Managed features of a cluster: one switch per feature with what it needs and what needs it,
// a drift badge with what differs, the plan (dry run) before anything changes, then the
// operation's steps live. The change sends only what the user changed (the diff contract).
import Badge from "@cloudscape-design/components/badge";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import Modal from "@cloudscape-design/components/modal";
import SpaceBetween from "@cloudscape-design/components/space-between";
import StatusIndicator from "@cloudscape-design/components/status-indicator";
import Table from "@cloudscape-design/components/table";
import Toggle from "@cloudscape-design/components/toggle";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { api, unwrap, type Schemas } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { usePrincipal } from "../../session";
import { newKey, startChange } from "./mutation";
import { ProgressPanel } from "./ProgressPanel";

type Feature = Schemas["FeatureOut"];
type Plan = Schemas["FeaturePlanOut"];
type Settings = Record<string, string | number | string[]>;

const featuresKey = (cluster: string) => ["cluster", cluster, "features"];

export function FeaturesPanel({ cluster }: { cluster: string }) {
  const viewer = usePrincipal().role === "viewer";
  const [change, setChange] = useState<{ feature: Feature; enabled: boolean } | null>(null);
  const query = useQuery({
    queryKey: featuresKey(cluster),
    queryFn: () => unwrap(api.GET("/api/v1/clusters/{cluster}/features", { params: { path: { cluster } } })),
    // observed state and drift come from the cloud: read again now and then, so a drift
    // made out of band shows without a reload
    refetchInterval: 10_000,
  });
  const items = query.data ?? [];
  const denied = viewer ? "Viewers cannot change features." : undefined;
  return (
    <div data-testid="features-panel">
      {query.isError && <ProblemAlert error={query.error} header="Could not list features" />}
      <Table
        variant="container"
        loading={query.isLoading}
        loadingText="Reading features from the cluster"
        items={items}
        trackBy="name"
        wrapLines
        header={<Header variant="h2" counter={`(${items.length})`} description="Each switch is reversible: turning a feature off removes exactly what podplane made for it.">Features</Header>}
        columnDefinitions={[
          {
            id: "switch",
            header: "On",
            cell: (f) => (
              <Toggle
                data-testid={`feature-toggle-${f.name}`}
                ariaLabel={`${f.title} on`}
                checked={f.desired_enabled}
                disabled={f.always_on || Boolean(denied)}
                onChange={(e) => setChange({ feature: f, enabled: e.detail.checked })}
              />
            ),
            minWidth: 70,
          },
          {
            id: "name",
            header: "Feature",
            isRowHeader: true,
            cell: (f) => (
              <SpaceBetween size="xxxs">
                <Box fontWeight="bold">{f.title}</Box>
                <Box variant="small">{f.summary}</Box>
                {f.version && <Box variant="small">version {f.version}</Box>}
              </SpaceBetween>
            ),
          },
          { id: "state", header: "State", cell: (f) => <FeatureState feature={f} onRepair={denied ? undefined : () => setChange({ feature: f, enabled: f.desired_enabled })} />, minWidth: 130 },
          { id: "deps", header: "Dependencies", cell: (f) => <Dependencies feature={f} /> },
        ]}
        empty={<Box textAlign="center">No features.</Box>}
      />
      {change && (
        <ChangeModal
          cluster={cluster}
          feature={change.feature}
          enabled={change.enabled}
          onClose={() => setChange(null)}
        />
      )}
    </div>
  );
}

function FeatureState({ feature: f, onRepair }: { feature: Feature; onRepair?: () => void }) {
  return (
    <div data-testid={`feature-state-${f.name}`}>
      <SpaceBetween size="xxs">
        {f.drifted ? (
          <Badge color="red">drifted</Badge>
        ) : f.observed_enabled ? (
          <StatusIndicator type="success">on</StatusIndicator>
        ) : (
          <StatusIndicator type="stopped">off</StatusIndicator>
        )}
        {f.drift.map((d) => (
          <Box key={d} variant="small" color="text-status-error">{d}</Box>
        ))}
        {f.drifted && onRepair && <Button variant="inline-link" onClick={onRepair}>Put it back</Button>}
      </SpaceBetween>
    </div>
  );
}

function Dependencies({ feature: f }: { feature: Feature }) {
  const parts = [
    ...(f.always_on ? ["Always on: part of every podplane cluster."] : []),
    ...(f.requires.length ? [`Needs ${f.requires.join(", ")} on first.`] : []),
    ...(f.dependants.length ? [`Needed by ${f.dependants.join(", ")}.`] : []),
    ...(f.core_dependencies.length ? [`Uses ${f.core_dependencies.join(", ")} (installed with the cluster).`] : []),
    ...f.notes.filter((n) => !f.always_on || !n.startsWith("Installed")),
  ];
  return <Box variant="small">{parts.join(" ") || "None."}</Box>;
}

function ChangeModal({ cluster, feature, enabled, onClose }: { cluster: string; feature: Feature; enabled: boolean; onClose: () => void }) {
  const client = useQueryClient();
  const key = useMemo(newKey, []);
  const [edits, setEdits] = useState<Record<string, string>>({});
  const [plan, setPlan] = useState<Plan | null>(null);
  const [opId, setOpId] = useState<string | null>(null);
  const [nothing, setNothing] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const settings = changedSettings(feature, edits);
  const body = { enabled: enabled === feature.desired_enabled && !feature.drifted ? undefined : enabled, ...(settings ? { settings } : {}) };
  const path = { cluster, feature: feature.name };
  const run = async (what: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await what();
    } catch (err) {
      setError(err);
    }
    setBusy(false);
  };
  const review = () =>
    run(async () => {
      const answer = await unwrap(api.POST("/api/v1/clusters/{cluster}/features/{feature}/plan", { params: { path }, body: { ...body, enabled } }));
      setPlan(answer.plan);
    });
  // Turning off (or a plan that deletes) may terminate nodes, which the server treats as a
  // destroy: Apply, after the reviewed plan, is the user's confirmation.
  const confirm = !enabled || Boolean(plan?.actions.some((a) => a.verb === "delete"));
  const apply = () =>
    run(async () => {
      const id = await startChange(
        api.PATCH("/api/v1/clusters/{cluster}/features/{feature}", { params: { path, header: { "Idempotency-Key": key } }, body: { ...body, enabled, ...(confirm ? { confirm } : {}) } }),
      );
      if (id) setOpId(id);
      else setNothing(true);
      void client.invalidateQueries({ queryKey: featuresKey(cluster) });
    });
  const close = () => {
    void client.invalidateQueries({ queryKey: featuresKey(cluster) });
    onClose();
  };
  const verb = enabled ? (feature.desired_enabled ? "Put back" : "Turn on") : "Turn off";
  return (
    <Modal
      visible
      size="large"
      onDismiss={close}
      header={`${verb}: ${feature.title}`}
      footer={
        <Box float="right">
          <SpaceBetween direction="horizontal" size="xs">
            <Button variant="link" onClick={close}>{opId || nothing ? "Close" : "Cancel"}</Button>
            {!opId && !nothing && !plan && <Button variant="primary" loading={busy} onClick={() => void review()} data-testid="feature-plan">Review plan</Button>}
            {!opId && !nothing && plan && (
              <Button variant="primary" loading={busy} disabled={!plan.actions.length} onClick={() => void apply()} data-testid="feature-apply">Apply</Button>
            )}
          </SpaceBetween>
        </Box>
      }
    >
      <SpaceBetween size="m">
        <Box variant="p">{enabled ? `Creates ${feature.creates}.` : `Removes what podplane made: ${feature.creates}. Objects it did not make are left alone.`}</Box>
        {enabled && !plan && feature.settings_schema.map((s) => (
          <FormField key={s.name} label={s.name} description={s.help}>
            <Input
              ariaLabel={s.name}
              value={edits[s.name] ?? shown(feature.desired_settings[s.name])}
              onChange={(e) => setEdits({ ...edits, [s.name]: e.detail.value })}
            />
          </FormField>
        ))}
        {plan && !opId && <PlanView plan={plan} />}
        {nothing && <StatusIndicator type="info">Nothing to change: the cluster already matches.</StatusIndicator>}
        {opId && (
          <div data-testid="progress">
            <ProgressPanel opId={opId} cluster={cluster} />
          </div>
        )}
        {error !== null && <ProblemAlert error={error} header="The feature was not changed" />}
      </SpaceBetween>
    </Modal>
  );
}

function PlanView({ plan }: { plan: Plan }) {
  return (
    <div data-testid="feature-plan-view">
      <SpaceBetween size="xs">
        <Box variant="h3">Plan ({plan.actions.length} change{plan.actions.length === 1 ? "" : "s"}, in order)</Box>
        {!plan.actions.length && <Box>Nothing to change.</Box>}
        {plan.actions.map((a) => (
          <Box key={`${a.verb} ${a.key}`} variant="code">
            {a.verb} {a.key}
            {a.differences.map((d) => ` · ${d}`).join("")}
          </Box>
        ))}
        {plan.left_alone.map((k) => (
          <Box key={k} variant="small">left alone: {k}</Box>
        ))}
      </SpaceBetween>
    </div>
  );
}

function shown(value: unknown): string {
  return Array.isArray(value) ? value.join(", ") : value === undefined || value === null ? "" : String(value);
}

/** Only the settings the user edited, typed as the feature declares them. */
function changedSettings(feature: Feature, edits: Record<string, string>): Settings | undefined {
  const out: Settings = {};
  for (const s of feature.settings_schema) {
    const raw = edits[s.name];
    if (raw === undefined || raw === shown(feature.desired_settings[s.name])) continue;
    out[s.name] = s.kind === "int" ? Number(raw) : s.kind === "names" ? raw.split(",").map((x) => x.trim()).filter(Boolean) : raw.trim();
  }
  return Object.keys(out).length ? out : undefined;
}
