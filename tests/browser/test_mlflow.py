"""The MLflow run of a job on the console's job page, in a real browser against a real
sandbox: a cluster made over REST, the mlflow feature enabled, a job submitted and run to its
end on the sandbox's stepped clock; the job page links to the run in the tracking server's
MLflow UI, naming the run's status and last loss."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Page, expect

from tests.browser import test_jobs as jobs
from tests.browser.cloud import CloudServer
from tests.browser.conftest import shot, sign_in
from tests.browser.test_jobs import cloud, cloud_token, site  # noqa: F401 - fixture reuse

JOB = "tracked"
CLUSTER, JOBS = jobs.CLUSTER, jobs.JOBS
pytestmark = pytest.mark.slow


def test_the_job_page_links_its_mlflow_run(page: Page, cloud: CloudServer,  # noqa: F811
                                           cloud_token: str) -> None:  # noqa: F811
    with cloud.api(cloud_token) as api:
        r = api.patch(f"/api/v1/clusters/{CLUSTER}/features/mlflow", json={"enabled": True})
        assert r.status_code == 202, r.text
        deadline = time.monotonic() + 240
        op = r.json()
        while op["status"] not in ("succeeded", "failed"):
            jobs._advance(cloud, 120)   # the tracking server takes virtual minutes
            op = api.get(f"/api/v1/operations/{op['id']}").json()
            assert time.monotonic() < deadline, op
        assert op["status"] == "succeeded", op
        r = api.post(JOBS, json={"name": JOB, "recipe": "pytorch-ddp",
                                 "instance_group": "accelerated-1", "replicas": 1})
        assert r.status_code == 202, r.text
        jobs._advance(cloud, 10)
        assert jobs._finish(api, r.json())["status"] == "succeeded"
        for _ in range(60):
            jobs._advance(cloud, 10)
            view = api.get(f"{JOBS}/{JOB}").json()
            if view["status"] in ("Succeeded", "Failed"):
                break
    assert view["status"] == "Succeeded" and view["mlflow"]["run_id"], view
    sign_in(page, cloud_token, f"/clusters/{CLUSTER}/jobs/{JOB}")
    link = page.get_by_test_id("job-mlflow")
    expect(link).to_contain_text("FINISHED")
    expect(link).to_contain_text("train_loss")
    expect(link).to_have_attribute("href", re.compile(
        rf"experiments\.sagemaker\.aws/#/experiments/\d+/runs/{view['mlflow']['run_id']}$"))
    shot(page, "jobs-detail-mlflow")
