"""IamPort, S3Port and StsPort over boto3 (IAM, S3 and STS API references)."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import unquote

from podplane.cloud.aws.caller import AwsCaller
from podplane.cloud.ports_aws import Shape


class IamAdapter:
    def __init__(self, caller: AwsCaller, boundary: str | None = None) -> None:
        """`boundary`: the managed policy ARN every role made carries as its permissions
        boundary (PODPLANE_ROLE_PERMISSIONS_BOUNDARY; docs/aws-permissions.md)."""
        self.aws = caller
        self.boundary = boundary

    async def get_role(self, name: str) -> Shape | None:
        found = await self.aws.maybe("iam", "get_role", RoleName=name)
        return None if found is None else dict(found["Role"])

    async def create_role(self, name: str, trust_policy: str,
                          tags: list[dict[str, str]]) -> Shape:
        bounded = {"PermissionsBoundary": self.boundary} if self.boundary else {}
        made = await self.aws.call("iam", "create_role", RoleName=name,
                                   AssumeRolePolicyDocument=trust_policy, Tags=tags, **bounded)
        return dict(made["Role"])

    async def delete_role(self, name: str) -> None:
        await self.aws.call("iam", "delete_role", RoleName=name)

    async def list_attached_role_policies(self, role: str) -> list[Shape]:
        found = await self.aws.call("iam", "list_attached_role_policies", RoleName=role)
        return list(found["AttachedPolicies"])

    async def attach_role_policy(self, role: str, policy_arn: str) -> None:
        await self.aws.call("iam", "attach_role_policy", RoleName=role, PolicyArn=policy_arn)

    async def detach_role_policy(self, role: str, policy_arn: str) -> None:
        await self.aws.call("iam", "detach_role_policy", RoleName=role, PolicyArn=policy_arn)

    async def list_role_policies(self, role: str) -> list[str]:
        found = await self.aws.call("iam", "list_role_policies", RoleName=role)
        return list(found["PolicyNames"])

    async def get_role_policy(self, role: str, policy_name: str) -> Shape | None:
        """The inline policy's document (decoded), or None when the role has none by that name."""
        found = await self.aws.maybe("iam", "get_role_policy", RoleName=role,
                                     PolicyName=policy_name)
        if found is None:
            return None
        doc = found["PolicyDocument"]  # botocore decodes it; a raw answer is URL-encoded JSON
        return dict(doc) if isinstance(doc, dict) else dict(json.loads(unquote(doc)))

    async def put_role_policy(self, role: str, policy_name: str, document: str) -> None:
        await self.aws.call("iam", "put_role_policy", RoleName=role, PolicyName=policy_name,
                            PolicyDocument=document)

    async def delete_role_policy(self, role: str, policy_name: str) -> None:
        await self.aws.call("iam", "delete_role_policy", RoleName=role, PolicyName=policy_name)

    async def list_open_id_connect_providers(self) -> list[Shape]:
        found = await self.aws.call("iam", "list_open_id_connect_providers")
        return list(found.get("OpenIDConnectProviderList", []))

    async def get_open_id_connect_provider(self, arn: str) -> Shape | None:
        return await self.aws.maybe("iam", "get_open_id_connect_provider",
                                    OpenIDConnectProviderArn=arn)

    async def delete_open_id_connect_provider(self, arn: str) -> None:
        await self.aws.call("iam", "delete_open_id_connect_provider",
                            OpenIDConnectProviderArn=arn)

    async def create_open_id_connect_provider(self, url: str, client_ids: list[str],
                                              tags: list[dict[str, str]]) -> str:
        # ThumbprintList is optional: IAM secures EKS issuers with its own trusted CAs (IAM
        # API CreateOpenIDConnectProvider; botocore iam model marks it not required)
        found = await self.aws.call("iam", "create_open_id_connect_provider", Url=url,
                                    ClientIDList=client_ids, Tags=tags)
        return str(found["OpenIDConnectProviderArn"])


class S3Adapter:
    """Every call on a bucket passes ExpectedBucketOwner (the caller's own account): a bucket of
    the same name in another account answers 403 instead of taking podplane's data (S3 User
    Guide, "Verifying bucket ownership with bucket owner condition"; botocore s3 model, member
    ExpectedBucketOwner). CreateBucket has no such member: S3 refuses a name taken anywhere."""

    def __init__(self, caller: AwsCaller) -> None:
        self.aws = caller
        self._account: str | None = None
        self._anonymous: AwsCaller | None = None

    async def owner(self) -> dict[str, str]:
        if self._account is None:
            identity = await self.aws.call("sts", "get_caller_identity")
            self._account = str(identity["Account"])
        return {"ExpectedBucketOwner": self._account}

    async def bucket_exists(self, bucket: str) -> bool:
        return await self.aws.maybe("s3", "get_bucket_location", Bucket=bucket,
                                    **await self.owner()) is not None

    async def create_bucket(self, bucket: str, region: str) -> None:
        # us-east-1 takes no LocationConstraint (S3 API Reference, CreateBucket)
        where = {} if region == "us-east-1" else {
            "CreateBucketConfiguration": {"LocationConstraint": region}}
        await self.aws.call("s3", "create_bucket", Bucket=bucket, **where)

    async def get_bucket_tags(self, bucket: str) -> list[dict[str, str]]:
        # S3 answers NoSuchTagSet (404) for a bucket without tags: no tags, not a missing bucket
        found = await self.aws.maybe("s3", "get_bucket_tagging", Bucket=bucket,
                                     **await self.owner())
        return [] if found is None else list(found.get("TagSet", []))

    async def put_bucket_tagging(self, bucket: str, tags: list[dict[str, str]]) -> None:
        await self.aws.call("s3", "put_bucket_tagging", Bucket=bucket,
                            Tagging={"TagSet": tags}, **await self.owner())

    async def list_objects(self, bucket: str, prefix: str) -> list[Shape]:
        """Every page: S3 answers at most MaxKeys (1,000) keys per call, "might contain fewer",
        and sets IsTruncated with a NextContinuationToken to pass back as ContinuationToken
        (S3 API Reference, ListObjectsV2)."""
        out: list[Shape] = []
        page: dict[str, str] = {}
        while True:
            listed = await self.aws.call("s3", "list_objects_v2", Bucket=bucket, Prefix=prefix,
                                         **page, **await self.owner())
            out += listed.get("Contents", [])
            token = listed.get("NextContinuationToken")
            if not listed.get("IsTruncated") or not token:
                return out
            page = {"ContinuationToken": str(token)}

    async def get_public_object(self, bucket: str, key: str) -> bytes:
        """An object anyone may read (another account's public bucket, e.g. JumpStart's), read
        anonymously: no ExpectedBucketOwner (the bucket is not ours), no IAM action."""
        if self._anonymous is None:
            self._anonymous = self.aws.anonymous()
        found = await self._anonymous.call("s3", "get_object", Bucket=bucket, Key=key)
        return bytes(await asyncio.to_thread(found["Body"].read))

    async def put_object(self, bucket: str, key: str, body: bytes) -> None:
        await self.aws.call("s3", "put_object", Bucket=bucket, Key=key, Body=body,
                            **await self.owner())

    async def delete_object(self, bucket: str, key: str) -> None:
        await self.aws.call("s3", "delete_object", Bucket=bucket, Key=key,
                            **await self.owner())


class StsAdapter:
    def __init__(self, caller: AwsCaller) -> None:
        self.aws = caller

    async def caller_identity(self) -> Shape:
        return await self.aws.call("sts", "get_caller_identity")
