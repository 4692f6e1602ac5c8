// Pieces the create forms share (deploy an endpoint, create a warm pool, download a model, a
// new space):
// the instance group picker, a number field, the engine and dtype choices, and the submit that
// turns a refusal into messages at the fields it names.
import FormField from "@cloudscape-design/components/form-field";
import Input from "@cloudscape-design/components/input";
import Select from "@cloudscape-design/components/select";
import { useQuery } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { api, unwrap } from "../../api/client";
import { ApiError, toProblem } from "../../api/problem";
import { newKey } from "../clusters/mutation";
import { fieldErrors, SubmitError, type FieldProblem } from "../jobs/model";

export const options = (values: string[]) => values.map((value) => ({ value, label: value }));
export const ENGINES = options(["vllm", "sglang"]);
export const DTYPES = options(["auto", "bfloat16", "float16", "float32"]);

interface GroupProps {
  cluster: string;
  value: string;
  onChange: (group: string) => void;
  errorText?: string;
  /** An optional choice: this label offers "no group" (the value ""). */
  anyLabel?: string;
}

export function GroupSelect({ cluster, value, onChange, errorText, anyLabel }: GroupProps) {
  const groups = useQuery({
    queryKey: ["instance-groups", cluster],
    queryFn: async () => unwrap(api.GET("/api/v1/clusters/{cluster}/instance-groups", { params: { path: { cluster } } })),
  });
  const choices = [
    ...(anyLabel ? [{ value: "", label: anyLabel }] : []),
    ...(groups.data ?? []).map((g) => ({ value: g.name, label: g.name, description: `${g.current_count ?? 0} × ${g.instance_type}` })),
  ];
  return (
    <FormField label="Instance group" errorText={errorText}>
      <Select
        ariaLabel="Instance group"
        placeholder="Choose a group"
        statusType={groups.isLoading ? "loading" : groups.isError ? "error" : "finished"}
        options={choices}
        selectedOption={choices.find((o) => o.value === value) ?? null}
        onChange={(e) => onChange(e.detail.selectedOption.value ?? "")}
      />
    </FormField>
  );
}

interface NumberProps {
  label: string;
  description?: string;
  value: string;
  placeholder?: string;
  onChange: (value: string) => void;
  errorText?: string;
}

export function NumberField({ label, description, value, placeholder, onChange, errorText }: NumberProps) {
  return (
    <FormField label={label} description={description} errorText={errorText}>
      <Input ariaLabel={label} type="number" value={value} placeholder={placeholder} onChange={(e) => onChange(e.detail.value)} />
    </FormField>
  );
}

type Answer = { data?: unknown; error?: unknown; response: Response };

/** One create: an idempotency key per form, busy while it runs, the refusal kept with its
 * field messages; `onStarted` gets the operation id (null: nothing to do). */
export function useSubmit(call: (key: string) => Promise<Answer>, onStarted: (op: string | null) => void) {
  const key = useMemo(newKey, []);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const go = async () => {
    setBusy(true);
    setError(null);
    let answer: Answer;
    try {
      answer = await call(key);
    } catch (err) {
      setBusy(false);
      return setError(err);
    }
    const { data, error: body, response } = answer;
    setBusy(false);
    if (!response.ok) return setError(new SubmitError(new ApiError(toProblem(body, response)), body as FieldProblem | undefined));
    onStarted(data && typeof data === "object" && "id" in data ? String(data.id) : null);
  };
  const errors = error instanceof SubmitError ? fieldErrors(error.body) : {};
  return { busy, error, errors, go: () => void go() };
}
