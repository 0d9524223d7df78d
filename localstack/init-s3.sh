#!/bin/sh
# LocalStack runs this once it is ready: create the bucket floe writes to.
awslocal s3 mb s3://floe || true
