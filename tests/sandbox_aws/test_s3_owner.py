"""ExpectedBucketOwner: S3 refuses a request whose expected owner is not the bucket's account
(403 AccessDenied, botocore s3 model, member ExpectedBucketOwner); moto alone would not."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from tests.sandbox_aws.conftest import Box

BUCKET = "podplane-owner-check"


def test_a_wrong_expected_owner_is_refused_and_changes_nothing(box: Box) -> None:
    s3 = box.client("s3")
    s3.create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    owner = box.client("sts").get_caller_identity()["Account"]
    s3.put_object(Bucket=BUCKET, Key="a", Body=b"1", ExpectedBucketOwner=owner)

    for call in (lambda: s3.put_object(Bucket=BUCKET, Key="b", Body=b"2",
                                       ExpectedBucketOwner="111122223333"),
                 lambda: s3.list_objects_v2(Bucket=BUCKET, ExpectedBucketOwner="111122223333"),
                 lambda: s3.get_bucket_location(Bucket=BUCKET,
                                                ExpectedBucketOwner="111122223333")):
        with pytest.raises(ClientError) as refused:
            call()
        assert refused.value.response["Error"]["Code"] == "AccessDenied"
        assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403

    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, ExpectedBucketOwner=owner)
            ["Contents"]]
    assert keys == ["a"]  # the refused PutObject wrote nothing


def test_a_missing_bucket_is_still_not_found_whatever_the_owner(box: Box) -> None:
    with pytest.raises(ClientError) as missing:
        box.client("s3").get_bucket_location(Bucket="podplane-nobody",
                                             ExpectedBucketOwner="111122223333")
    assert missing.value.response["Error"]["Code"] == "NoSuchBucket"


async def test_the_product_s3_adapter_names_the_owner_on_every_bucket_call(box: Box) -> None:
    from podplane.cloud.aws.iam import S3Adapter
    from podplane.domain.errors import CloudError
    from tests.sandbox_aws.test_adapters import caller

    ours = S3Adapter(caller(box)[0])
    assert not await ours.bucket_exists(BUCKET)
    await ours.create_bucket(BUCKET, "us-west-2")
    await ours.put_bucket_tagging(BUCKET, [{"Key": "podplane:managed", "Value": "true"}])
    await ours.put_object(BUCKET, "k", b"v")
    assert [o["Key"] for o in await ours.list_objects(BUCKET, "")] == ["k"]

    # The same bucket name seen by a podplane in another account: someone else's bucket.
    theirs = S3Adapter(caller(box)[0])
    theirs._account = "111122223333"
    for call in (theirs.bucket_exists(BUCKET), theirs.get_bucket_tags(BUCKET),
                 theirs.put_object(BUCKET, "x", b"stolen"), theirs.list_objects(BUCKET, ""),
                 theirs.delete_object(BUCKET, "k"),
                 theirs.put_bucket_tagging(BUCKET, [])):
        with pytest.raises(CloudError) as refused:
            await call
        assert refused.value.code == "access_denied" and "AccessDenied" in str(refused.value)
    assert [o["Key"] for o in await ours.list_objects(BUCKET, "")] == ["k"]
    assert await ours.get_bucket_tags(BUCKET) == [{"Key": "podplane:managed", "Value": "true"}]
