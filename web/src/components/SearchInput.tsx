// A filter box bound to one URL query parameter, so filters survive a reload and can be linked.
import Input from "@cloudscape-design/components/input";
import { useEffect, useRef, useState } from "react";
import { setSearch, useSearch } from "../router";

interface Props {
  param: string;
  placeholder: string;
  ariaLabel: string;
}

export function SearchInput({ param, placeholder, ariaLabel }: Props) {
  const current = useSearch().get(param) ?? "";
  const [draft, setDraft] = useState(current);
  const timer = useRef<number | undefined>(undefined);

  // Follow the URL when it changes from elsewhere (a link, "clear filters", back button).
  useEffect(() => setDraft(current), [current]);

  const change = (value: string) => {
    setDraft(value);
    window.clearTimeout(timer.current);
    timer.current = window.setTimeout(() => setSearch({ [param]: value.trim() }), 300);
  };

  return (
    <Input
      type="search"
      value={draft}
      placeholder={placeholder}
      ariaLabel={ariaLabel}
      onChange={(e) => change(e.detail.value)}
    />
  );
}
