"""Prepares a fresh moto_server for the integration tests.

moto checks signatures after INITIAL_NO_AUTH_ACTION_COUNT unsigned actions;
this script spends exactly those (SETUP_ACTIONS) creating two IAM users and
prints their keys as shell assignments:
  LG_AK / LG_SK          a user allowed everything
  LG_DENIED_AK / _SK     a user with no policy (every DynamoDB call denied)
"""
import json
import sys

import boto3

SETUP_ACTIONS = 5

ep = sys.argv[1]
iam = boto3.client("iam", endpoint_url=ep, region_name="us-east-1",
                   aws_access_key_id="setup", aws_secret_access_key="setup")
iam.create_user(UserName="leasegate")
iam.put_user_policy(UserName="leasegate", PolicyName="all", PolicyDocument=json.dumps(
    {"Version": "2012-10-17",
     "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
key = iam.create_access_key(UserName="leasegate")["AccessKey"]
iam.create_user(UserName="denied")
denied = iam.create_access_key(UserName="denied")["AccessKey"]
print(f"LG_AK={key['AccessKeyId']}")
print(f"LG_SK={key['SecretAccessKey']}")
print(f"LG_DENIED_AK={denied['AccessKeyId']}")
print(f"LG_DENIED_SK={denied['SecretAccessKey']}")
