// One recipe parameter: a choice, a switch or a typed value, with its bounds as the hint.
import Checkbox from "@cloudscape-design/components/checkbox";
import FormField from "@cloudscape-design/components/form-field";
import Input from "@cloudscape-design/components/input";
import Select from "@cloudscape-design/components/select";
import type { RecipeParam } from "./model";

interface Props {
  param: RecipeParam;
  value: string;
  error?: string;
  onChange: (value: string) => void;
}

function bounds(p: RecipeParam): string {
  if (p.minimum !== null && p.maximum !== null) return ` (${p.minimum} to ${p.maximum})`;
  if (p.minimum !== null) return ` (at least ${p.minimum})`;
  if (p.maximum !== null) return ` (at most ${p.maximum})`;
  return "";
}

export function ParamField({ param: p, value, error, onChange }: Props) {
  const label = p.name;
  const description = `${p.description} Default: ${String(p.default)}${bounds(p)}.`;
  if (p.type === "bool") {
    return (
      <FormField label={label} description={description} errorText={error}>
        <Checkbox checked={value === "true"} onChange={(e) => onChange(String(e.detail.checked))}>
          {label}
        </Checkbox>
      </FormField>
    );
  }
  if (p.choices.length > 0) {
    const options = p.choices.map((c) => ({ value: c, label: c }));
    return (
      <FormField label={label} description={description} errorText={error}>
        <Select ariaLabel={label} options={options} selectedOption={options.find((o) => o.value === value) ?? null} onChange={(e) => onChange(e.detail.selectedOption.value ?? "")} />
      </FormField>
    );
  }
  const numeric = p.type === "int" || p.type === "float";
  return (
    <FormField label={label} description={description} errorText={error}>
      <Input ariaLabel={label} inputMode={numeric ? "decimal" : undefined} value={value} onChange={(e) => onChange(e.detail.value)} />
    </FormField>
  );
}
